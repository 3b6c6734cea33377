"""Losses: values against numpy formulas, gradients against finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gradbox.autograd import losses
from gradbox.autograd.engine import Value

STEP = 1e-6
TOLERANCE = 1e-6


def finite_difference_per_sample(loss: Callable[[np.ndarray], float],
                                 scores: np.ndarray) -> np.ndarray:
    grads = np.empty_like(scores)
    for index in np.ndindex(scores.shape):
        up, down = scores.copy(), scores.copy()
        up[index] += STEP
        down[index] -= STEP
        grads[index] = (loss(up) - loss(down)) / (2 * STEP)
    return grads


# --- reference formulas ---------------------------------------------------------------------
def y_of(labels: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(labels) == 1, 1.0, -1.0)


def numpy_hinge(s: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(np.maximum(0.0, 1.0 - y_of(labels) * s)))


def numpy_mse(s: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean((s - y_of(labels)) ** 2))


def numpy_logistic(s: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, -y_of(labels) * s)))


def numpy_softmax(scores: np.ndarray, labels: np.ndarray) -> float:
    """scores: (classes, n)."""
    shifted = scores - scores.max(axis=0)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=0))
    return float(-np.mean(log_probs[labels, np.arange(len(labels))]))


BINARY_LOSSES = {
    "hinge": (losses.hinge, numpy_hinge),
    "mse": (losses.mse, numpy_mse),
    "logistic": (losses.logistic, numpy_logistic),
}


@st.composite
def two_class_batches(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(1, 8))
    scores = np.array(draw(st.lists(st.floats(-4, 4), min_size=n, max_size=n)))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return scores, labels


@pytest.mark.parametrize("name", sorted(BINARY_LOSSES))
@settings(max_examples=60, deadline=None)
@given(batch=two_class_batches())
def test_two_class_losses_match_numpy_and_finite_differences(name: str, batch: tuple) -> None:
    scores, labels = batch
    loss_fn, reference = BINARY_LOSSES[name]
    margin = y_of(labels) * scores
    # Keep clear of hinge's kink at margin 1. Logistic's abs kinks at score 0 cancel
    # (the loss is smooth there), so its scores may be anything, 0 included.
    assume(name != "hinge" or np.min(np.abs(1 - margin)) > 1e-3)
    score = Value(scores)
    loss = loss_fn(score, labels)
    assert loss.data == pytest.approx(reference(scores, labels), rel=1e-12, abs=1e-12)
    loss.backward()
    numeric = finite_difference_per_sample(lambda s: loss_fn(Value(s), labels).data, scores)
    np.testing.assert_allclose(score.grad, numeric, rtol=TOLERANCE, atol=TOLERANCE)


@pytest.mark.parametrize("name", sorted(BINARY_LOSSES))
def test_a_single_float_score_and_label_work_like_a_batch_of_one(name: str) -> None:
    loss_fn, _ = BINARY_LOSSES[name]
    single, batch = Value(0.3), Value(np.array([0.3]))
    one, many = loss_fn(single, np.int64(1)), loss_fn(batch, np.array([1]))
    assert type(one.data) is float
    assert one.data == pytest.approx(many.data, abs=1e-15)
    one.backward()
    many.backward()
    assert single.grad == pytest.approx(batch.grad[0], abs=1e-15)


def test_hinge_is_micrograds_max_margin_loss() -> None:
    score = Value(np.array([2.0, 0.5, -0.5, 0.25]))
    loss = losses.hinge(score, np.array([1, 1, 1, 0]))
    # margins y*s = 2, 0.5, -0.5, -0.25 -> relu(1 - m) = 0, 0.5, 1.5, 1.25
    assert loss.data == pytest.approx((0 + 0.5 + 1.5 + 1.25) / 4, abs=1e-15)
    loss.backward()
    np.testing.assert_allclose(score.grad, [0.0, -0.25, -0.25, 0.25], atol=1e-15)


@pytest.mark.parametrize(("score", "label", "value", "slope"), [
    (1000.0, 1, 0.0, 0.0),
    (-1000.0, 1, 1000.0, -1.0),
    (1000.0, 0, 1000.0, 1.0),
    (-1000.0, 0, 0.0, 0.0),
])
def test_logistic_is_stable_for_huge_scores(score: float, label: int, value: float,
                                           slope: float) -> None:
    for data in (score, np.array([score, score])):
        s = Value(data)
        loss = losses.logistic(s, np.full(np.shape(data), label))
        assert loss.data == pytest.approx(value, abs=1e-12)
        loss.backward()
        np.testing.assert_allclose(s.grad, slope / np.size(data), atol=1e-12)


def test_logistic_slope_at_score_zero_is_minus_one_half_for_class_one() -> None:
    s = Value(0.0)
    losses.logistic(s, np.int64(1)).backward()
    assert s.grad == pytest.approx(-0.5)


# --- softmax cross-entropy ----------------------------------------------------------------
@st.composite
def multi_class_batches(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    k, n = draw(st.integers(2, 4)), draw(st.integers(1, 6))
    flat = draw(st.lists(st.floats(-5, 5), min_size=k * n, max_size=k * n))
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    return np.array(flat).reshape(k, n), labels


@settings(max_examples=80, deadline=None)
@given(batch=multi_class_batches())
def test_softmax_cross_entropy_matches_numpy_and_finite_differences(batch: tuple) -> None:
    scores, labels = batch
    values = [Value(row) for row in scores]
    loss = losses.softmax_cross_entropy(values, labels)
    assert loss.data == pytest.approx(numpy_softmax(scores, labels), rel=1e-12, abs=1e-12)
    loss.backward()
    analytic = np.array([v.grad for v in values])
    numeric = finite_difference_per_sample(
        lambda s: losses.softmax_cross_entropy([Value(r) for r in s], labels).data, scores)
    np.testing.assert_allclose(analytic, numeric, rtol=TOLERANCE, atol=TOLERANCE)
    # The textbook form of the same gradient: (softmax - one_hot) / n.
    probs = np.exp(scores - scores.max(axis=0))
    probs /= probs.sum(axis=0)
    one_hot = (np.arange(len(scores))[:, None] == labels).astype(float)
    np.testing.assert_allclose(analytic, (probs - one_hot) / len(labels), atol=1e-12)


def test_softmax_cross_entropy_is_stable_for_huge_scores() -> None:
    values = [Value(np.array([1000.0, -1000.0])), Value(np.array([-1000.0, 1000.0]))]
    loss = losses.softmax_cross_entropy(values, np.array([0, 0]))
    assert loss.data == pytest.approx(1000.0, rel=1e-12)  # (0 + 2000) / 2
    loss.backward()
    assert np.all(np.isfinite(values[0].grad))


# --- dispatch, penalties, accuracy ----------------------------------------------------------
def test_compute_loss_dispatches_by_name() -> None:
    s = Value(np.array([0.3, -1.2]))
    labels = np.array([1, 0])
    for name, (fn, _) in BINARY_LOSSES.items():
        assert losses.compute_loss(name, s, labels).data == fn(s, labels).data
    pair = [Value(np.array([0.3, -1.2])), Value(np.array([1.0, 0.5]))]
    assert (losses.compute_loss("softmax", pair, labels).data
            == losses.softmax_cross_entropy(pair, labels).data)


def test_compute_loss_refuses_mismatched_outputs_and_unknown_names() -> None:
    s = Value(np.array([0.3]))
    labels = np.array([1])
    with pytest.raises(ValueError, match="at least 2"):
        losses.compute_loss("softmax", s, labels)
    with pytest.raises(ValueError, match="one output, got 2"):
        losses.compute_loss("hinge", [s, s], labels)
    with pytest.raises(ValueError, match="unknown loss"):
        losses.compute_loss("huber", s, labels)


def test_penalties_and_their_gradients() -> None:
    params = [Value(0.5), Value(-2.0), Value(0.0)]
    l2 = losses.l2_penalty(params)
    assert l2.data == 0.25 + 4.0
    l2.backward()
    assert [p.grad for p in params] == [1.0, -4.0, 0.0]
    for p in params:
        p.grad = 0.0
    l1 = losses.l1_penalty(params)
    assert l1.data == 2.5
    l1.backward()
    assert [p.grad for p in params] == [1.0, -1.0, 0.0]


def test_signed_maps_class_zero_to_minus_one_and_class_one_to_plus_one() -> None:
    np.testing.assert_array_equal(losses.signed(np.array([0, 1, 1])), [-1.0, 1.0, 1.0])


def test_accuracy_uses_the_sign_of_one_score_and_the_argmax_of_several() -> None:
    assert losses.accuracy(np.array([0.5, -0.5, 0.0, 2.0]), np.array([1, 0, 0, 0])) == 0.75
    scores = [np.array([0.1, 0.9, 0.2]), np.array([0.5, 0.1, 0.1]), np.array([0.0, 0.0, 0.3])]
    np.testing.assert_array_equal(losses.predictions(scores), [1, 0, 2])
    assert losses.accuracy(scores, np.array([1, 0, 0])) == pytest.approx(2 / 3)


def test_loss_names_and_labels_are_checked_first() -> None:
    a, b = Value(np.zeros(2)), Value(np.zeros(2))
    with pytest.raises(ValueError, match="unknown loss 'bogus'"):
        losses.compute_loss("bogus", [a, b], np.array([0, 1]))
    with pytest.raises(ValueError, match=r"labels must be class numbers 0\.\.1"):
        losses.softmax_cross_entropy([a, b], np.array([0, 2]))


def test_one_record_per_loss_and_task_and_one_text_per_name() -> None:
    keys = [(loss.task, loss.name) for loss in losses.TABLE]
    assert len(keys) == len(set(keys))
    assert losses.LOSSES == ("hinge", "mse", "logistic", "softmax")
    assert losses.REGRESSION_LOSSES == ("mse", "mae", "huber")
    for loss in losses.TABLE:
        assert losses.lookup(loss.name, loss.task == losses.REGRESSION) is loss
        # Where a name serves both tasks, the menu and the readout call it the same.
        assert losses.MENU[loss.name] == loss.menu and losses.LOSS_LABELS[loss.name] == loss.label
        assert loss.loop_call.endswith("(scores, y)") and loss.torch_lines[-1].startswith("return")
    with pytest.raises(ValueError, match="unknown regression loss 'hinge'"):
        losses.lookup("hinge", regression=True)
