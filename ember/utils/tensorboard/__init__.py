"""torch.utils.tensorboard: SummaryWriter writing TensorBoard event files (needs tensorboard)."""
from .writer import FileWriter, SummaryWriter
