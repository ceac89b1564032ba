"""ember.tiny: on-device training under 256 KB (DESIGN §9). `ember.tiny.mcu` builds C for a
Cortex-M and runs it in an emulator with the board's memory; `ember.tiny.kernels` holds the
int8 C99 kernels the generated programs call."""
from .scheme import UpdateScheme  # noqa: E402,F401
from .fold import fold_bn  # noqa: E402,F401
from .program import compile_training, TrainingProgram  # noqa: E402,F401
