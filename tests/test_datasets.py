"""Datasets: shapes, labels, seeds, noise, the train/test split, edits and CSV in/out."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.files import points_csv
from gradbox.training import datasets
from gradbox.training.datasets import Dataset, DatasetError

TWO_CLASS = ("moons", "circle", "xor", "gaussians", "spiral")


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the last bit, -0.0 and 0.0 told apart."""
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kind", datasets.KINDS)
@pytest.mark.parametrize("n", [2, 7, 100])
def test_shapes_and_types(kind: str, n: int) -> None:
    ds = datasets.make(kind, n=n, noise=0.1, seed=1)
    assert ds.points.shape == (n, 2) and ds.points.dtype == np.float64
    assert ds.labels.shape == (n,) and ds.labels.dtype == np.int64
    assert ds.is_test.shape == (n,) and ds.is_test.dtype == bool
    assert len(ds) == n
    assert np.all(np.isfinite(ds.points))


@pytest.mark.parametrize("kind", TWO_CLASS)
def test_two_class_label_set(kind: str) -> None:
    ds = datasets.make(kind, n=100, noise=0.1, seed=0)
    assert set(ds.labels.tolist()) == {0, 1}
    assert ds.classes == 2


@pytest.mark.parametrize("k", range(2, 7))
def test_blobs_have_k_balanced_classes(k: int) -> None:
    ds = datasets.make("blobs", n=60, noise=0.1, seed=0, classes=k)
    assert ds.classes == k
    assert np.bincount(ds.labels).tolist() == [60 // k + (i < 60 % k) for i in range(k)]


@pytest.mark.parametrize("k", [1, 7])
def test_blobs_refuse_other_class_counts(k: int) -> None:
    with pytest.raises(DatasetError, match="classes"):
        datasets.make("blobs", n=60, classes=k)


@pytest.mark.parametrize("kind", datasets.KINDS)
def test_same_seed_same_data_other_seed_other_data(kind: str) -> None:
    a = datasets.make(kind, n=50, noise=0.2, seed=7, test_ratio=0.3)
    b = datasets.make(kind, n=50, noise=0.2, seed=7, test_ratio=0.3)
    c = datasets.make(kind, n=50, noise=0.2, seed=8, test_ratio=0.3)
    assert same_bits(a.points, b.points) and same_bits(a.labels, b.labels)
    assert same_bits(a.is_test, b.is_test)
    assert not np.array_equal(a.points, c.points)


@pytest.mark.parametrize("kind", datasets.KINDS)
@pytest.mark.parametrize("noise", [0.0, 0.25, 0.5])
def test_noise_range_works(kind: str, noise: float) -> None:
    ds = datasets.make(kind, n=40, noise=noise, seed=3)
    assert np.all(np.isfinite(ds.points))


@pytest.mark.parametrize("noise", [-0.01, 0.51, 1.0, math.nan, math.inf])
def test_noise_out_of_range_is_refused(noise: float) -> None:
    with pytest.raises(DatasetError, match="noise"):
        datasets.make("moons", n=40, noise=noise)


def test_unknown_kind_and_too_few_points() -> None:
    with pytest.raises(DatasetError, match="unknown dataset 'ring'"):
        datasets.make("ring")
    with pytest.raises(DatasetError, match="at least 2 points"):
        datasets.make("moons", n=1)


def test_noiseless_moons_lie_on_their_half_circles() -> None:
    ds = datasets.make("moons", n=100, noise=0.0)
    outer = ds.points[ds.labels == 0]
    inner = ds.points[ds.labels == 1] - [1.0, 0.5]
    np.testing.assert_allclose(np.hypot(*outer.T), 1.0)
    np.testing.assert_allclose(np.hypot(*inner.T), 1.0)
    assert np.all(outer[:, 1] >= 0) and np.all(inner[:, 1] <= 1e-12)


def test_noiseless_circle_and_xor_follow_their_rules() -> None:
    circle = datasets.make("circle", n=200, noise=0.0, seed=2)
    r = np.hypot(*circle.points.T)
    assert np.all(r[circle.labels == 1] < 2.5) and np.all(r[circle.labels == 0] >= 3.5)
    xor = datasets.make("xor", n=200, noise=0.0, seed=2)
    x, y = xor.points.T
    assert np.array_equal(xor.labels, (x * y >= 0).astype(np.int64))
    assert np.all(np.abs(xor.points) >= 0.3)


@pytest.mark.parametrize("kind", ["circle", "xor"])
def test_playground_noise_flips_labels_but_leaves_points_in_place(kind: str) -> None:
    # TensorFlow Playground labels a jittered copy of each point; the point stays put.
    ds = datasets.make(kind, n=400, noise=0.5, seed=4)
    if kind == "circle":
        r = np.hypot(*ds.points.T)
        assert np.all((r < 2.5) | (r >= 3.5))  # still in the disc or the ring
        rule = (r < 2.5).astype(np.int64)
    else:
        assert np.all(np.abs(ds.points) >= 0.3) and np.all(np.abs(ds.points) <= 5.3)
        rule = (ds.points[:, 0] * ds.points[:, 1] >= 0).astype(np.int64)
    flipped = np.mean(ds.labels != rule)
    assert 0.02 < flipped < 0.5


def test_gaussians_spread_grows_with_noise() -> None:
    spreads = [datasets.make("gaussians", n=400, noise=s, seed=1).points.std()
               for s in (0.0, 0.25, 0.5)]
    assert spreads[0] < spreads[1] < spreads[2]


@pytest.mark.parametrize(("n", "ratio", "expected"),
                         [(100, 0.0, 0), (100, 0.2, 20), (50, 0.5, 25), (10, 0.33, 3),
                          (2, 0.9, 1), (3, 0.99, 2)])
def test_split_ratio_keeps_a_training_point(n: int, ratio: float, expected: int) -> None:
    ds = datasets.make("gaussians", n=n, seed=0, test_ratio=ratio)
    assert int(ds.is_test.sum()) == expected
    train_points, _ = ds.train
    test_points, _ = ds.test
    assert len(train_points) == n - expected and len(test_points) == expected


@pytest.mark.parametrize("ratio", [-0.1, 1.0, 1.5])
def test_split_refuses_bad_ratio(ratio: float) -> None:
    with pytest.raises(DatasetError, match="test ratio"):
        datasets.make("moons", test_ratio=ratio)


# --- editing ----------------------------------------------------------------------------
def test_add_point_and_remove_nearest() -> None:
    ds = datasets.make("moons", n=10, seed=0)
    before = ds.copy()
    ds.add_point(0.25, -3.0, 1)
    assert len(ds) == 11
    assert ds.points[-1].tolist() == [0.25, -3.0] and ds.labels[-1] == 1 and not ds.is_test[-1]
    ds.add_point(9.0, 9.0, 0, test=True)
    assert ds.is_test[-1]
    assert ds.nearest(0.3, -2.9) == 10
    assert ds.remove_nearest(0.3, -2.9) == 10
    assert ds.remove_nearest(8.0, 8.0) == 10
    assert same_bits(ds.points, before.points) and same_bits(ds.labels, before.labels)
    assert same_bits(ds.is_test, before.is_test)


def test_remove_nearest_on_empty_dataset() -> None:
    ds = Dataset(np.zeros((0, 2)), np.zeros(0, np.int64))
    assert ds.nearest(0, 0) == -1 and ds.remove_nearest(0, 0) == -1
    assert len(ds) == 0


def test_copy_is_independent() -> None:
    ds = datasets.make("xor", n=10, seed=0)
    copy = ds.copy()
    copy.add_point(1.0, 1.0, 1)
    copy.points[0, 0] = 99.0
    assert len(ds) == 10 and ds.points[0, 0] != 99.0


@pytest.mark.parametrize(("x", "y", "label", "message"),
                         [(0.0, 0.0, 2, "class 2"), (0.0, 0.0, -1, "class -1"),
                          (math.nan, 0.0, 0, "not finite"), (0.0, math.inf, 1, "not finite")])
def test_add_point_refuses(x: float, y: float, label: int, message: str) -> None:
    ds = datasets.make("moons", n=10)
    with pytest.raises(DatasetError, match=message):
        ds.add_point(x, y, label)
    assert len(ds) == 10


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"points": np.zeros((2, 3)), "labels": [0, 1]}, r"shape \(n, 2\)"),
    ({"points": np.zeros((3, 2)), "labels": [0, 1]}, "3 points but 2 labels"),
    ({"points": np.zeros((2, 2)), "labels": [0, 2]}, "class numbers 0..1"),
    ({"points": np.zeros((2, 2)), "labels": [0, -1]}, "class numbers"),
    ({"points": np.zeros((2, 2)), "labels": [0, 1], "classes": 7}, "classes"),
    ({"points": [[0, 0], [math.nan, 0]], "labels": [0, 1]}, "finite"),
    ({"points": np.zeros((2, 2)), "labels": [0, 1], "is_test": [True]}, "test mask"),
])
def test_dataset_refuses_inconsistent_arrays(kwargs: dict, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        Dataset(**kwargs)


# --- CSV --------------------------------------------------------------------------------
finite = st.floats(-datasets.MAX_COORDINATE, datasets.MAX_COORDINATE)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(finite, finite, st.integers(0, 1)), min_size=2, max_size=30)
       .filter(lambda rows: len({r[2] for r in rows}) == 2))
def test_csv_round_trip_is_exact(rows: list[tuple[float, float, int]]) -> None:
    ds = Dataset(np.array([r[:2] for r in rows]), np.array([r[2] for r in rows]))
    back = points_csv.from_csv(points_csv.to_csv(ds))
    assert same_bits(back.points, ds.points)
    assert same_bits(back.labels, ds.labels)
    assert back.classes == 2


def test_csv_file_round_trip_with_many_classes(tmp_path) -> None:
    ds = datasets.make("blobs", n=30, noise=0.3, seed=5, classes=5)
    path = tmp_path / "points.csv"
    points_csv.save_csv(ds, path)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "x,y,label"
    back = points_csv.load_csv(path, test_ratio=0.2, seed=1)
    assert same_bits(back.points, ds.points) and same_bits(back.labels, ds.labels)
    assert back.classes == 5 and int(back.is_test.sum()) == 6


def test_csv_accepts_reordered_columns_blank_lines_and_a_bom() -> None:
    text = "\ufefflabel, Y ,X\n1,2.5,-1\n\n0,3,4\n"
    ds = points_csv.from_csv(text)
    assert ds.points.tolist() == [[-1.0, 2.5], [4.0, 3.0]]
    assert ds.labels.tolist() == [1, 0]


@pytest.mark.parametrize(("text", "line"), [
    ("", "line 1:"),
    ("\n\n", "line 1:"),
    ("x,y\n1,2\n", "line 1: missing column label"),
    ("a,b,c\n1,2,0\n", "line 1: missing column x, y, label"),
    ("x,y,label\n1,2,0\n3,four,1\n", "line 3: x and y must be numbers"),
    ("x,y,label\n1,2,0\n3,4,1\nnan,1,0\n", "line 4: x and y must be finite"),
    ("x,y,label\n1,2,0\n3,inf,1\n", "line 3: x and y must be finite"),
    ("x,y,label\n1,2,0\n3,4\n", "line 3: expected 3 values, got 2"),
    ("x,y,label\n1,2,0\n3,4,1.0\n", "line 3: label must be a class number"),
    ("x,y,label\n1,2,0\n3,4,-1\n", "line 3: label must be a class number"),
    ("x,y,label\n1,2,0\n3,4,6\n", "line 3: label must be a class number"),
    ("x,y,label\n1,2,0\n3,4,\u00b2\n", "line 3: label must be a class number"),
    ("x,y,label\n", "line 2: the file has 0 data rows"),
    ("x,y,label\n1,2,1\n", "line 3: the file has 1 data rows"),
    ("x,y,label\n1,2,1\n3,4,1\n5,6,1\n", "lines 2-4: every row has label 1"),
    ('x,y,label\n1,2,0\n"3,4,1\n', "line 3: expected 3 values, got 1"),  # open quote
])
def test_malformed_csv_names_the_line(text: str, line: str) -> None:
    with pytest.raises(DatasetError) as info:
        points_csv.from_csv(text)
    assert line in str(info.value)


def test_csv_field_over_the_csv_module_limit_names_the_line() -> None:
    huge = "1" * (csv.field_size_limit() + 10)
    with pytest.raises(DatasetError, match="line 3: not valid CSV"):
        points_csv.from_csv(f"x,y,label\n1,2,0\n{huge},4,1\n")


def test_binary_csv_file_is_refused(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(b"x,y,label\n1,1,0\n\x00\x01,1,0\n")
    with pytest.raises(DatasetError, match="line 3: not a text file"):
        points_csv.load_csv(path)
    # Bytes that are not UTF-8 are read as Windows-1252: the cell at fault is named.
    path.write_bytes(b"x,y,label\n\xff\xfe,1,0\n")
    with pytest.raises(DatasetError, match="line 2: x and y must be numbers, got '\xff\xfe'"):
        points_csv.load_csv(path)


def test_absurdly_large_coordinates_are_refused_with_the_line() -> None:
    text = "x,y,label\n1e308,2,0\n-1e308,4,1\n0,0,1\n"
    with pytest.raises(DatasetError, match="line 2: x and y must lie within"):
        points_csv.from_csv(text)
    data = datasets.make("moons", 10, 0.1, seed=0)
    with pytest.raises(DatasetError, match="beyond"):
        data.add_point(2e6, 0.0, 0)
    assert len(data) == 10
