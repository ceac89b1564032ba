"""Graph passes of the pt2e flow: observer insertion, q/dq conversion, QAT conv-bn."""
from .export_utils import (allow_exported_model_train_eval, move_exported_model_to_eval,
                           move_exported_model_to_train)

__all__ = ["allow_exported_model_train_eval", "move_exported_model_to_eval",
           "move_exported_model_to_train"]
