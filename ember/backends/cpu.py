"""torch.backends.cpu: which SIMD level the CPU offers (what generated code may target)."""


def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT', from the CPU flags (Linux /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return "DEFAULT"
    if "avx512f" in flags and "avx512bw" in flags and "avx512vl" in flags:
        return "AVX512"
    if "avx2" in flags:
        return "AVX2"
    return "DEFAULT"
