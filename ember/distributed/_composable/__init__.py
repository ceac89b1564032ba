"""torch.distributed._composable: composable APIs (fully_shard lives in .fsdp)."""
