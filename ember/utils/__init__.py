"""ember.utils: helpers mirroring torch.utils."""
