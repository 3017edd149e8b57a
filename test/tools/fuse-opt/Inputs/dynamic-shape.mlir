func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fuse.relu %x : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
