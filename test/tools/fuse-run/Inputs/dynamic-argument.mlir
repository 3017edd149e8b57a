// A dynamic argument returned as it is: no op verifier sees it.
func.func @f(%i: tensor<?xi64>) -> tensor<?xi64> {
  return %i : tensor<?xi64>
}
