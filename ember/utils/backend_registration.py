"""torch.utils.backend_registration: naming and wiring a PrivateUse1 device backend
(implemented in ember/_privateuse1.py)."""
from .._privateuse1 import (_register_device_module, generate_methods_for_privateuse1_backend,
                            rename_privateuse1_backend)

__all__ = ["rename_privateuse1_backend", "generate_methods_for_privateuse1_backend",
           "_register_device_module"]
