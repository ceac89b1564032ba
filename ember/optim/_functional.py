"""The update math of every optimizer as functions over lists of tensors.

Same names, argument order and operation order as PyTorch's single-tensor ("for-loop")
implementations, so trajectories agree to rounding. Every update is an in-place ember op
on the parameter/state tensors (so modes -- profiler, recording, determinism -- see them);
callers run them under no_grad. The distributed optimizer and the tiny-training compiler
call these directly. Scalar state ('step', 'mu_product', 'eta', 'mu') is a 0-d tensor
updated in place, as in PyTorch.
"""
from .optimizer import _to_scalar

__all__ = ["sgd", "adam", "adamw", "adagrad", "adadelta", "adamax", "nadam", "radam",
           "rmsprop", "rprop", "asgd"]


def _ember():
    import ember
    return ember


def _check_capturable(capturable, params):
    """capturable=True needs graph-capturable devices; ember tensors live on the cpu."""
    if capturable and params:
        raise AssertionError("If capturable=True, params and state_steps must be on supported "
                             "devices: ['cuda', 'xpu', 'hpu', 'xla'] (ember params are on cpu).")


def _real(*tensors):
    """view_as_real for complex tensors (the update runs on the real view, as in PyTorch)."""
    vr = _ember().view_as_real
    return [vr(t) if t is not None and t.is_complex() else t for t in tensors]


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, *, weight_decay,
        momentum, lr, dampening, nesterov, maximize):
    """SGD with optional momentum/dampening/nesterov; new momentum buffers are written back
    into `momentum_buffer_list`."""
    lr, weight_decay = _to_scalar(lr), _to_scalar(weight_decay)
    for i, param in enumerate(params):
        grad = d_p_list[i] if not maximize else -d_p_list[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        param.add_(grad, alpha=-lr)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
         beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay=False,
         capturable=False):
    """Adam (and AdamW with decoupled_weight_decay=True), bias-corrected.

    capturable=True (or fake step counters) follows PyTorch's capturable branch: the
    bias corrections are tensor ops on the step counter, so the step reads nothing back
    to the host and a recording mode sees all of it. ember allows it on the cpu."""
    maximum = _ember().maximum
    beta1, beta2 = _to_scalar(beta1), _to_scalar(beta2)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t.add_(1)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(_to_scalar(1 - lr * weight_decay))
            else:
                grad = grad.add(param, alpha=weight_decay)
        max_sq = max_exp_avg_sqs[i] if amsgrad else None
        param, grad, exp_avg, exp_avg_sq, max_sq = _real(param, grad, exp_avg, exp_avg_sq,
                                                         max_sq)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        if capturable or step_t._fake:
            _adam_capturable_update(param, exp_avg, exp_avg_sq, max_sq, step_t, amsgrad=amsgrad,
                                    beta1=beta1, beta2=beta2, lr=lr, eps=eps)
            continue
        step = step_t.item()  # eager only: capturable=False reads the step, as PyTorch
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = _to_scalar(lr / bias_correction1)
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            maximum(max_sq, exp_avg_sq, out=max_sq)
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)


def _adam_capturable_update(param, exp_avg, exp_avg_sq, max_sq, step_t, *, amsgrad, beta1,
                            beta2, lr, eps):
    """PyTorch's capturable Adam tail: step size and bias corrections as 0-d tensors.
    (`number / tensor` is written as PyTorch evaluates it: tensor.reciprocal() * number.)"""
    bias_correction1 = 1 - beta1 ** step_t
    bias_correction2 = 1 - beta2 ** step_t
    step_size = bias_correction1.reciprocal() * lr
    step_size_neg = step_size.neg()
    bias_correction2_sqrt = bias_correction2.sqrt()
    eps_term = step_size_neg.reciprocal() * eps
    if amsgrad:
        max_sq.copy_(_ember().maximum(max_sq, exp_avg_sq))
        denom = (max_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps_term)
    else:
        denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps_term)
    param.addcdiv_(exp_avg, denom)


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs):
    """AdamW: Adam with decoupled weight decay."""
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
         decoupled_weight_decay=True, **kwargs)


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
            maximize):
    """Adagrad with learning-rate decay lr / (1 + (step - 1) * lr_decay)."""
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = step_t.item()
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = _to_scalar(lr / (1 + (step - 1) * lr_decay))
        param, grad, state_sum = _real(param, grad, state_sum)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps,
             weight_decay, maximize, capturable=False):
    """Adadelta: unit-corrected steps from running averages of grad^2 and delta^2."""
    _check_capturable(capturable, params)
    lr = _to_scalar(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs,
                                                        acc_deltas, state_steps):
        step.add_(1)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, square_avg, acc_delta = _real(param, grad, square_avg, acc_delta)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr,
           weight_decay, maximize, capturable=False):
    """Adamax: Adam with the infinity norm for the second moment."""
    _check_capturable(capturable, params)
    maximum = _ember().maximum
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf, step_t = exp_avgs[i], exp_infs[i], state_steps[i]
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, exp_avg, exp_inf = _real(param, grad, exp_avg, exp_inf)
        exp_avg.lerp_(grad, 1 - beta1)
        maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = _to_scalar(lr / (1 - beta1 ** step_t.item()))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps, decoupled_weight_decay=False, maximize,
          capturable=False):
    """NAdam: Adam with Nesterov momentum and the momentum-decay schedule."""
    _check_capturable(capturable, params)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product, step_t = (exp_avgs[i], exp_avg_sqs[i],
                                                   mu_products[i], state_steps[i])
        param, grad, exp_avg, exp_avg_sq = _real(param, grad, exp_avg, exp_avg_sq)
        step_t.add_(1)
        step = step_t.item()
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(_to_scalar(1 - lr * weight_decay))
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_val = mu_product.item()
        mu_product_next = mu_product_val * mu_next
        denom.add_(eps)
        param.addcdiv_(grad, denom, value=_to_scalar(-lr * (1.0 - mu) / (1.0 - mu_product_val)))
        param.addcdiv_(exp_avg, denom,
                       value=_to_scalar((-lr * mu_next) / (1.0 - mu_product_next)))


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr,
          weight_decay, eps, decoupled_weight_decay=False, maximize, capturable=False):
    """RAdam: Adam with the variance rectification term (plain momentum while rho_t <= 5)."""
    _check_capturable(capturable, params)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        param, grad, exp_avg, exp_avg_sq = _real(param, grad, exp_avg, exp_avg_sq)
        step_t.add_(1)
        step = step_t.item()
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(_to_scalar(1 - lr * weight_decay))
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr,
            alpha, eps, weight_decay, momentum, centered, maximize, capturable=False):
    """RMSprop, optionally centered and with momentum."""
    _check_capturable(capturable, params)
    lr = _to_scalar(lr)
    for i, param in enumerate(params):
        state_steps[i].add_(1)
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        param, grad, square_avg = _real(param, grad, square_avgs[i])
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            (grad_avg,) = _real(grad_avgs[i])
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            (buf,) = _real(momentum_buffer_list[i])
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)


def rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max,
          etaminus, etaplus, maximize, capturable=False):
    """Rprop: per-element step sizes grown/shrunk by the sign agreement of successive grads."""
    _check_capturable(capturable, params)
    where = _ember().where
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        state_steps[i].add_(1)
        param, grad, prev, step_size = _real(param, grad, prevs[i], step_sizes[i])
        sign = grad.mul(prev).sign()
        sign = where(sign.gt(0), etaplus, where(sign.lt(0), etaminus, where(sign.eq(0), 1,
                                                                            sign)))
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = where(sign.eq(etaminus), 0, grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay,
         maximize, capturable=False):
    """ASGD: SGD with decaying eta and Polyak averaging of the iterates into `ax`."""
    _check_capturable(capturable, params)
    as_tensor = _ember().as_tensor
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        mu, eta, step_t = mus[i], etas[i], state_steps[i]
        param, grad, ax = _real(param, grad, axs[i])
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        step = step_t.item()
        eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(as_tensor(1 / max(1, step - t0)))


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1), (x2, f2, g2), clipped to bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search satisfying the strong Wolfe conditions (PyTorch's port of minFunc)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.clone(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
