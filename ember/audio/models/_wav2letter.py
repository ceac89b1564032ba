"""Wav2Letter (Collobert et al. 2016) with torchaudio's module layout, so torchaudio
state_dicts (acoustic_model.0.0.weight, ...) load unchanged."""
from ember import nn

__all__ = ["Wav2Letter"]


def _conv(cin, cout, k, s, p):
    return [nn.Conv1d(in_channels=cin, out_channels=cout, kernel_size=k, stride=s, padding=p),
            nn.ReLU(inplace=True)]


class Wav2Letter(nn.Module):
    """Fully convolutional speech recogniser; forward gives log-probabilities (N, C, T')."""

    def __init__(self, num_classes=40, input_type="waveform", num_features=1):
        super().__init__()
        if input_type not in ("waveform", "power_spectrum", "mfcc"):
            raise ValueError(f"input_type must be 'waveform', 'power_spectrum' or 'mfcc', got "
                             f"{input_type!r}")
        features = 250 if input_type == "waveform" else num_features
        layers = _conv(features, 250, 48, 2, 23)
        for _ in range(7):
            layers += _conv(250, 250, 7, 1, 3)
        layers += _conv(250, 2000, 32, 1, 16) + _conv(2000, 2000, 1, 1, 0)
        layers += _conv(2000, num_classes, 1, 1, 0)
        acoustic_model = nn.Sequential(*layers)
        if input_type == "waveform":
            waveform_model = nn.Sequential(*_conv(num_features, 250, 250, 160, 45))
            self.acoustic_model = nn.Sequential(waveform_model, acoustic_model)
        else:
            self.acoustic_model = acoustic_model

    def forward(self, x):
        return nn.functional.log_softmax(self.acoustic_model(x), dim=1)
