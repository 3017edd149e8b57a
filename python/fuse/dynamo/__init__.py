"""The torch.compile integration's machinery: the per-op fallback
(`_partition`), masked attention routed to one op (`_masked_attention`),
what a forward saves for its backward (`_saved_slabs`, `_saved_views`) and
random numbers in compiled graphs (`_graph_rng`). Its face is
`fuse.backend`; these modules are internal."""
