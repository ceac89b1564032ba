"""ember.tiny: on-device training under 256 KB (DESIGN §9). `ember.tiny.mcu` builds C for a
Cortex-M and runs it in an emulator with the board's memory; `ember.tiny.kernels` holds the
int8 C99 kernels the generated programs call."""
