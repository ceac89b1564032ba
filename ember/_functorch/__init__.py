"""functorch internals: BatchedTensor and the vmap mode, batching and jvp rules, and the
function transforms that ember.func exposes."""
