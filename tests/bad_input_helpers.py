"""Multi-statement inputs of the bad-input corpus (tests/bad_input_cases.py): each takes
the framework module `t` (torch or ember) and does one bad thing with it."""


def _f(t, *shape):
    return t.ones(*shape)


def _backward_twice(t):
    x = t.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _backward_nonscalar(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).backward()


def _backward_no_grad(t):
    t.ones(3).sum().backward()


def _backward_wrong_grad_shape(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).backward(t.ones(4))


def _grad_nonleaf(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    return t.autograd.grad(y.sum(), [x, t.ones(2)])


def _grad_unused(t):
    x = t.ones(3, requires_grad=True)
    z = t.ones(3, requires_grad=True)
    return t.autograd.grad((x * 2).sum(), [z])


def _grad_unused_allowed(t):
    x = t.ones(3, requires_grad=True)
    z = t.ones(3, requires_grad=True)
    return t.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)[0]


def _inplace_leaf(t):
    x = t.ones(3, requires_grad=True)
    x.add_(1)


def _inplace_leaf_nograd(t):
    x = t.ones(3, requires_grad=True)
    with t.no_grad():
        x.add_(1)
    return x


def _modified_saved(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    z = y.exp()
    y.add_(1)
    z.sum().backward()


def _modified_saved_ok(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    z = y + 1
    y.add_(1)
    z.sum().backward()
    return x.grad


def _int_requires_grad(t):
    x = t.ones(3, dtype=t.int64)
    x.requires_grad_(True)


def _int_requires_grad_attr(t):
    x = t.ones(3, dtype=t.int64)
    x.requires_grad = True


def _nonleaf_requires_grad_false(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).requires_grad_(False)


def _grad_wrong_shape(t):
    x = t.ones(3, requires_grad=True)
    x.grad = t.ones(4)


def _grad_wrong_dtype(t):
    x = t.ones(3, requires_grad=True)
    x.grad = t.ones(3, dtype=t.float64)


def _grad_not_tensor(t):
    x = t.ones(3, requires_grad=True)
    x.grad = [1.0, 2.0, 3.0]


def _grad_ok(t):
    x = t.ones(3, requires_grad=True)
    x.grad = t.zeros(3)
    return x.grad


def _data_other_dtype(t):
    x = t.ones(3, requires_grad=True)
    x.data = t.ones(3, dtype=t.int64)


def _data_other_shape(t):
    x = t.ones(3, requires_grad=True)
    x.data = t.ones(4)
    return x


def _data_not_tensor(t):
    x = t.ones(3)
    x.data = [1, 2]


def _retain_grad_nograd(t):
    t.ones(3).retain_grad()


def _hook_nograd(t):
    t.ones(3).register_hook(lambda g: g)


def _backward_inputs_empty(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).sum().backward(inputs=[])


def _int_iadd_float(t):
    x = t.ones(3, dtype=t.int64)
    x += 1.5


def _int_iadd_float_tensor(t):
    x = t.ones(3, dtype=t.int64)
    x += t.ones(3)


def _int_imul_float(t):
    x = t.ones(3, dtype=t.int32)
    x *= 0.5


def _bool_iadd(t):
    x = t.ones(3, dtype=t.bool)
    x += 1


def _float_iadd_int(t):
    x = t.ones(3)
    x += t.ones(3, dtype=t.int64)
    return x


def _int_idiv(t):
    x = t.ones(3, dtype=t.int64)
    x /= 2


def _iadd_broadcast_out(t):
    x = t.ones(3)
    x += t.ones(2, 3)


def _float_iadd_complex(t):
    x = t.ones(3)
    x += t.ones(3, dtype=t.complex64)


def _setitem_shape(t):
    x = t.zeros(3, 4)
    x[0] = t.ones(5)


def _setitem_oob(t):
    x = t.zeros(3)
    x[5] = 1


def _setitem_ok(t):
    x = t.zeros(3, 4)
    x[0] = t.ones(4)
    return x


def _view_noncontig(t):
    return t.ones(3, 4).t().view(12)


def _linear_in(t):
    return t.nn.Linear(4, 2)(t.ones(3, 5))


def _conv2d_3d(t):
    return t.nn.Conv2d(3, 4, 3)(t.ones(2, 3, 8, 8, 1))


def _conv2d_channels(t):
    return t.nn.Conv2d(3, 4, 3)(t.ones(2, 5, 8, 8))


def _conv2d_small(t):
    return t.nn.Conv2d(3, 4, 5)(t.ones(1, 3, 3, 3))


def _conv2d_unbatched(t):
    return t.nn.Conv2d(3, 4, 3)(t.ones(3, 8, 8))


def _conv1d_2d(t):
    return t.nn.Conv1d(3, 4, 3)(t.ones(3))


def _embedding_oob(t):
    return t.nn.Embedding(5, 2)(t.tensor([1, 5]))


def _embedding_neg(t):
    return t.nn.Embedding(5, 2)(t.tensor([-1]))


def _embedding_float(t):
    return t.nn.Embedding(5, 2)(t.tensor([1.0]))


def _bn_train_1(t):
    return t.nn.BatchNorm1d(3)(t.ones(1, 3))


def _bn_eval_1(t):
    m = t.nn.BatchNorm1d(3)
    m.eval()
    return m(t.ones(1, 3))


def _bn_wrong_features(t):
    return t.nn.BatchNorm1d(3)(t.ones(4, 5))


def _bn2d_3d(t):
    return t.nn.BatchNorm2d(3)(t.ones(4, 3, 5))


def _ln_shape(t):
    return t.nn.LayerNorm(4)(t.ones(2, 5))


def _gn_groups(t):
    return t.nn.GroupNorm(3, 4)


def _gn_channels(t):
    return t.nn.GroupNorm(2, 4)(t.ones(2, 6, 3))


def _sd_missing(t):
    m = t.nn.Linear(2, 3)
    m.load_state_dict({"weight": t.ones(3, 2)})


def _sd_unexpected(t):
    m = t.nn.Linear(2, 3)
    m.load_state_dict({"weight": t.ones(3, 2), "bias": t.ones(3), "extra": t.ones(1)})


def _sd_shape(t):
    m = t.nn.Linear(2, 3)
    m.load_state_dict({"weight": t.ones(2, 2), "bias": t.ones(3)})


def _sd_nonstrict(t):
    m = t.nn.Linear(2, 3)
    r = m.load_state_dict({"weight": t.ones(3, 2)}, strict=False)
    return t.tensor([len(r.missing_keys), len(r.unexpected_keys)])


def _sd_nonstrict_shape(t):
    m = t.nn.Linear(2, 3)
    m.load_state_dict({"weight": t.ones(2, 2)}, strict=False)


def _sd_not_mapping(t):
    t.nn.Linear(2, 3).load_state_dict([1, 2])


def _module_bad_attr(t):
    return t.nn.Linear(2, 3).nonexistent


def _register_param_not_param(t):
    t.nn.Linear(2, 3).register_parameter("p", t.ones(2))


def _register_param_dot(t):
    t.nn.Linear(2, 3).register_parameter("a.b", None)


def _register_buffer_bad(t):
    t.nn.Linear(2, 3).register_buffer("b", [1, 2])


def _add_module_bad(t):
    t.nn.Module().add_module("m", 3)


def _assign_tensor_to_param(t):
    m = t.nn.Linear(2, 3)
    m.weight = t.ones(3, 2)


def _sequential_index(t):
    return t.nn.Sequential(t.nn.ReLU())[3]


def _modulelist_bad(t):
    return t.nn.ModuleList([3])


def _module_to_bad(t):
    return t.nn.Linear(2, 3).to("foo")


def _opt(t, cls, **kw):
    p = t.nn.Parameter(t.ones(2))
    return getattr(t.optim, cls)([p], **kw)


def _opt_empty(t):
    return t.optim.SGD([], lr=0.1)


def _opt_not_iterable(t):
    return t.optim.SGD(t.nn.Parameter(t.ones(2)), lr=0.1)


def _opt_int_param(t):
    return t.optim.SGD([1, 2], lr=0.1)


def _opt_nonleaf(t):
    x = t.ones(2, requires_grad=True) * 2
    return t.optim.SGD([x], lr=0.1)


def _opt_dup(t):
    p = t.nn.Parameter(t.ones(2))
    return t.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _opt_set(t):
    return t.optim.SGD({t.nn.Parameter(t.ones(2))}, lr=0.1)


def _opt_load_bad(t):
    p = t.nn.Parameter(t.ones(2))
    o = t.optim.SGD([p], lr=0.1)
    o.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})


def _opt_add_group_no_params(t):
    p = t.nn.Parameter(t.ones(2))
    t.optim.SGD([p], lr=0.1).add_param_group({"lr": 0.1})


def _dl(t, **kw):
    return t.utils.data.DataLoader(list(range(10)), **kw)


def _dl_iter(t, **kw):
    return next(iter(t.utils.data.DataLoader(list(range(10)), **kw)))


def _type_foo(t):
    return t.ones(2).type("foo")


def _meta_numpy(t):
    return t.empty(2, device="meta").numpy()


def _meta_tolist(t):
    return t.empty(2, device="meta").tolist()


def _meta_item(t):
    return t.empty(1, device="meta").item()


def _numpy_grad(t):
    return t.ones(2, requires_grad=True).numpy()


def _tolist_grad(t):
    return t.tensor(t.ones(2, requires_grad=True).tolist())


def _resize_grad(t):
    t.ones(2, requires_grad=True).resize_(3)


def _ce_target_float_1d(t):
    return t.nn.functional.cross_entropy(t.ones(3, 4), t.ones(3))


def _ce_target_int32(t):
    return t.nn.functional.cross_entropy(t.ones(3, 4), t.ones(3, dtype=t.int32))


def _ce_target_oob(t):
    return t.nn.functional.cross_entropy(t.ones(3, 4), t.tensor([0, 1, 4]))


def _nll_target_oob(t):
    return t.nn.functional.nll_loss(t.ones(3, 4), t.tensor([0, 1, -2]))


def _F(t):
    return t.nn.functional


def _nonleaf_grad(t):
    x = t.ones(3, requires_grad=True)
    y = x * 2
    y.sum().backward()
    return t.tensor(y.grad is None)


def _backward_twice_retained(t):
    x = t.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return x.grad


def _grad_twice(t):
    x = t.ones(3, requires_grad=True)
    y = (x * x).sum()
    t.autograd.grad(y, x)
    return t.autograd.grad(y, x)


def _view_of_leaf_inplace(t):
    x = t.ones(3, requires_grad=True)
    x[0:2].mul_(2)


def _detach_inplace_shared(t):
    x = t.ones(3, requires_grad=True)
    y = x.exp()
    y.detach().zero_()
    y.sum().backward()


def _backward_grad_dtype(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).backward(t.ones(3, dtype=t.float64))
    return x.grad


def _backward_grad_int(t):
    x = t.ones(3, requires_grad=True)
    (x * 2).backward(t.ones(3, dtype=t.int64))
