"""ember.nn.functional: one module per family, all re-exported here (torch.nn.functional).

Each family module defines __all__; add one `from .<family> import *` line per family."""
from ._conv import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._embedding import *  # noqa: F401,F403
from ._activation import *  # noqa: F401,F403
from ._linear import *  # noqa: F401,F403
from ._misc import *  # noqa: F401,F403
from ._padding import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._vision import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ._fractional_pool import *  # noqa: F401,F403
