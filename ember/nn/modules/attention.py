"""MultiheadAttention (PyTorch defines it in activation.py; the name is the same here).

Note: parameters have PyTorch's names — `in_proj_weight` (3E, E) when kdim == vdim ==
embed_dim, otherwise `q_proj_weight`/`k_proj_weight`/`v_proj_weight` — plus
`in_proj_bias`, `out_proj` (a NonDynamicallyQuantizableLinear, as PyTorch names it) and
`bias_k`/`bias_v` with add_bias_kv; the same xavier/zero initialisation. Forward always
takes PyTorch's reference path (F.multi_head_attention_forward); PyTorch's inference
fast path computes the same values, except that it returns nested-tensor zeros for
padded positions, which ember does not emulate.
"""
from ...ops.creation import empty
from .. import functional as F
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype=dtype))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype=dtype))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            xavier_uniform_(self.q_proj_weight)
            xavier_uniform_(self.k_proj_weight)
            xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             F._none_or_dtype(attn_mask), "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                      check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        kwargs = {}
        if not self._qkv_same_embed_dim:
            kwargs = dict(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                          k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal, **kwargs)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """Merges an attention and a key-padding mask into (B, H, L, L) and a mask type."""
        mask_type = merged = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.reshape(batch, -1, seq_len, seq_len)
            else:
                merged = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.reshape(batch, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
