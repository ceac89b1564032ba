"""Summary protos for SummaryWriter (the layouts torch.utils.tensorboard writes).

Why tensorboard's own protos: the files must be read by TensorBoard and its
EventAccumulator, so the wire format comes from the tensorboard package, not a copy."""
import io

import numpy as np


def _pb():
    try:
        from tensorboard.compat.proto import summary_pb2
    except ImportError as e:
        raise ImportError("ember.utils.tensorboard needs the tensorboard package: pip install "
                          "'ember[tensorboard]'") from e
    return summary_pb2


def make_np(x):
    """ember tensor / number / array -> NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (int, float, bool, np.number)):
        return np.array([x])
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return np.asarray(x)


def scalar(name, value, new_style=False, double_precision=False):
    pb = _pb()
    value = float(make_np(value).squeeze())
    if not new_style:
        return pb.Summary(value=[pb.Summary.Value(tag=name, simple_value=value)])
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    if double_precision:
        tensor = TensorProto(double_val=[value], dtype="DT_DOUBLE", tensor_shape=TensorShapeProto())
    else:
        tensor = TensorProto(float_val=[value], dtype="DT_FLOAT", tensor_shape=TensorShapeProto())
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(plugin_name="scalars"))
    return pb.Summary(value=[pb.Summary.Value(tag=name, tensor=tensor, metadata=meta)])


def default_bins():
    """TensorFlow's exponential buckets: +-1e-12 * 1.1**k up to 1e20, and 0."""
    v, buckets = 1e-12, []
    while v < 1e20:
        buckets.append(v)
        v *= 1.1
    return [-b for b in buckets[::-1]] + [0] + buckets


def histogram(name, values, bins, max_bins=None):
    pb = _pb()
    from tensorboard.compat.proto.summary_pb2 import HistogramProto
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = default_bins()
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        subsampling = len(counts) // max_bins
        remainder = len(counts) % subsampling
        if remainder:
            counts = np.pad(counts, (0, subsampling - remainder))
        counts = counts.reshape(-1, subsampling).sum(-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    # keep only the range of non-empty buckets (one empty bucket to the left), like torch
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    hist = HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())
    return pb.Summary(value=[pb.Summary.Value(tag=name, histo=hist)])


def convert_to_hwc(tensor, input_format):
    """Reorder an image (or NCHW batch, gridded 8 per row) to HWC with 3 or 4 channels."""
    fmt = input_format.upper()
    if len(set(fmt)) != len(fmt) or len(tensor.shape) != len(fmt):
        raise ValueError(f"dataformats {input_format} does not match the image shape "
                         f"{tuple(tensor.shape)}")
    if len(fmt) == 4:
        nchw = tensor.transpose([fmt.find(c) for c in "NCHW"])
        return _grid(nchw).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc, hwc, hwc], 2) if hwc.shape[2] == 1 else hwc
    hw = tensor.transpose([fmt.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)


def _grid(img, ncols=8):
    if img.shape[1] == 1:
        img = np.concatenate([img, img, img], 1)
    nimg, c, h, w = img.shape
    ncols = min(nimg, ncols)
    nrows = int(np.ceil(float(nimg) / ncols))
    canvas = np.zeros((c, h * nrows, w * ncols), dtype=img.dtype)
    for i in range(nimg):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = img[i]
    return canvas


def image(tag, tensor, dataformats="CHW"):
    """uint8 images as-is, float images scaled by 255; PNG-encoded with pillow."""
    pb = _pb()
    from PIL import Image
    arr = make_np(tensor)
    hwc = convert_to_hwc(arr, dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channel = hwc.shape
    buf = io.BytesIO()
    Image.fromarray(hwc).save(buf, format="PNG")
    img = pb.Summary.Image(height=height, width=width, colorspace=channel,
                           encoded_image_string=buf.getvalue())
    return pb.Summary(value=[pb.Summary.Value(tag=tag, image=img)])


def text(tag, text):
    pb = _pb()
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return pb.Summary(value=[pb.Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                              tensor=tensor)])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of the HParams plugin."""
    pb = _pb()
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData,
                                                             SessionEndInfo, SessionStartInfo)
    from google.protobuf.struct_pb2 import ListValue, Value
    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("parameter: hparam_dict and metric_dict should be dictionary.")
    hparam_domain_discrete = hparam_domain_discrete or {}

    def wrap(tag, **content):
        data = HParamsPluginData(version=0, **content).SerializeToString()
        meta = pb.SummaryMetadata(plugin_data=pb.SummaryMetadata.PluginData(
            plugin_name="hparams", content=data))
        return pb.Summary(value=[pb.Summary.Value(tag=tag, metadata=meta)])

    ssi = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if hasattr(v, "item"):
            v = v.item()
        domain = hparam_domain_discrete.get(k)
        if isinstance(v, bool):
            ssi.hparams[k].bool_value = v
            kind, wrap_v = "DATA_TYPE_BOOL", (lambda d: Value(bool_value=d))
        elif isinstance(v, (int, float)):
            ssi.hparams[k].number_value = v
            kind, wrap_v = "DATA_TYPE_FLOAT64", (lambda d: Value(number_value=d))
        elif isinstance(v, str):
            ssi.hparams[k].string_value = v
            kind, wrap_v = "DATA_TYPE_STRING", (lambda d: Value(string_value=d))
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        info = HParamInfo(name=k, type=DataType.Value(kind))
        if domain is not None:
            info.domain_discrete.CopyFrom(ListValue(values=[wrap_v(d) for d in domain]))
        infos.append(info)
    metrics = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    exp = wrap("_hparams_/experiment",
               experiment=Experiment(hparam_infos=infos, metric_infos=metrics))
    start = wrap("_hparams_/session_start_info", session_start_info=ssi)
    end = wrap("_hparams_/session_end_info",
               session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")))
    return exp, start, end
