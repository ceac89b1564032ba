"""ember.nn.utils: gradient clipping, parameter/vector conversion, parametrizations,
weight/spectral norm, conv-bn fusion and functional_call (torch.nn.utils' layout)."""
