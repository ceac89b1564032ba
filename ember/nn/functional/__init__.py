"""ember.nn.functional: one module per family, all re-exported here (torch.nn.functional).

Each family module defines __all__; add one `from .<family> import *` line per family."""
