"""Record a run: its states at a range of steps, replayed from the history, written as an
animated GIF (Pillow), an MP4 video (PyAV: FFmpeg's H.264) or numbered PNG frames.

`snapshots_at(state, steps)` rebuilds the run from an immutable `TrainingState` (a copy:
the app's own trainer is never touched) and yields its snapshot at each step -- rewind
and replay are exact, so a frame shows the weights the run had at that step, bit for bit.
What a frame looks like is the caller's: `write_animation` takes any iterable of RGB
arrays (views.plots.animation_frames draws the app's pictures).

Writing happens where the caller runs it, into a temporary name beside the target that is
renamed over it only once complete: a cancelled or failed export leaves no partial file,
and an older file of that name survives. `cancelled()` is asked before each frame;
`progress(done, total)` is told after each.

The app runs `record` in a process of its own (gradbox.runner.worker): replaying, drawing
and above all encoding hold Python's interpreter lock for long stretches (Pillow's GIF
quantising held it up to 340 ms at a time), and a thread of the window's process would
make the window wait for them. Cancel stops it between frames; a process killed in the
middle leaves its temporary file, which `remove_partials` removes.

Pure Python: numpy, Pillow, PyAV; no Qt.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from gradbox.formatting import counted
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

FORMATS = {"gif": "GIF animation", "mp4": "MP4 video", "png": "PNG frames"}
SUFFIXES = {"gif": ".gif", "mp4": ".mp4", "png": ""}  # PNG frames go in a folder
MAX_FRAMES = 10_000
MIN_SIDE, MAX_SIDE = 64, 3840
MAX_FPS = 60

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


class ExportCancelledError(Exception):
    """The user cancelled: nothing was written."""


class RunTooShortError(ValueError):
    """The run is shorter than the recording asked for (it was rewound or replaced)."""


class TargetTakenError(ValueError):
    """The export's name is taken by something the export must not replace: a folder
    holding anything but frames, a device, a pipe."""


def _is_frame(entry: os.DirEntry[str]) -> bool:
    """A frame an earlier PNG export wrote (frame-0001.png ...), a plain file."""
    name = entry.name
    digits = name[len("frame-"):-len(".png")]
    return (name.startswith("frame-") and name.endswith(".png") and digits.isascii()
            and digits.isdigit() and entry.is_file(follow_symlinks=False))


def check_target(path: str | os.PathLike[str], kind: str) -> None:
    """Refuse to export to `path` if what is there is not an export's to replace: PNG
    frames replace only a missing or empty folder or one of frames alone (an earlier
    export); a GIF or MP4 replaces only a missing or plain file. Raises TargetTakenError
    saying what to do."""
    target = Path(path)
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if kind == "png":
        if not stat.S_ISDIR(mode):
            raise TargetTakenError(f"{target.name} is already there and is not a folder of "
                                   "frames: choose a new folder name")
        with os.scandir(target) as entries:
            other = next((e.name for e in entries if not _is_frame(e)), None)
        if other is not None:
            raise TargetTakenError(f"the folder {target.name} already holds other things "
                                   f"({other}): PNG frames go in a new folder of their own, "
                                   "choose another name")
        return
    try:
        mode = os.stat(target).st_mode  # a link: what it points at
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise TargetTakenError(f"{target.name} is not a file (a folder, a device or a "
                               "pipe): choose another name")


def _replace_frames(tmp: Path, target: Path) -> None:
    """Put the new frames folder `tmp` at `target`, where an earlier export's frames
    (checked: nothing else) may be; those are removed frame by frame, never a whole
    tree: whatever else appeared meanwhile stays."""
    if not target.exists():
        tmp.rename(target)
        return
    old = _temporary(target)
    target.rename(old)
    tmp.rename(target)
    with contextlib.suppress(OSError):
        with os.scandir(old) as entries:
            for entry in entries:
                if _is_frame(entry):
                    os.unlink(entry.path)
        old.rmdir()


def frame_steps(first: int, last: int, every: int = 1) -> list[int]:
    """The steps a recording shows: first, first + every, ..., and always last."""
    if not 0 <= first <= last:
        raise ValueError(f"the steps must run forward from 0: got {first} to {last}")
    if every < 1:
        raise ValueError(f"every must be at least 1, got {every}")
    steps = list(range(first, last + 1, every))
    if steps[-1] != last:
        steps.append(last)
    if len(steps) > MAX_FRAMES:
        raise ValueError(f"{len(steps):,} frames; a recording has at most {MAX_FRAMES:,}: "
                         f"show one every {-(-(last - first) // (MAX_FRAMES - 1)):,} steps "
                         "or more")
    return steps


def snapshots_at(state: TrainingState, steps: Sequence[int]) -> Iterator[Snapshot]:
    """The run's snapshot after each of `steps` steps (0 = the initial weights), in order
    of `steps`. Each comes from a rewind of a copy of the run: a replay from the nearest
    kept checkpoint, exact."""
    for step in steps:
        if not 0 <= step <= state.step:
            raise ValueError(f"the run has steps 0..{state.step}, not {step}")
    for step in steps:
        trainer = Trainer.from_state(state)
        trainer.rewind(step)
        yield trainer.snapshot()


def even_size(width: int, height: int) -> tuple[int, int]:
    """A frame size every format takes: within bounds, and even (H.264's 4:2:0 colour
    needs even sides)."""
    w = min(max(int(width), MIN_SIDE), MAX_SIDE)
    h = min(max(int(height), MIN_SIDE), MAX_SIDE)
    return w - w % 2, h - h % 2


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}.partial")


def _counted(frames: Iterable[np.ndarray], total: int, progress: Progress | None,
             cancelled: Cancelled | None) -> Iterator[np.ndarray]:
    for done, frame in enumerate(frames, start=1):
        if cancelled is not None and cancelled():
            raise ExportCancelledError
        yield frame
        if progress is not None:
            progress(done, total)
    if cancelled is not None and cancelled():
        raise ExportCancelledError


def write_animation(frames: Iterable[np.ndarray], total: int, path: str | os.PathLike[str],
                    kind: str, fps: float, progress: Progress | None = None,
                    cancelled: Cancelled | None = None) -> Path:
    """Write `total` RGB frames ((h, w, 3) uint8, all one size) as `kind` ('gif', 'mp4'
    or 'png': a folder of frame-0001.png ...) to `path`. Returns the path written.
    Raises ExportCancelledError (nothing written), OSError, or ValueError for bad settings."""
    if kind not in FORMATS:
        raise ValueError(f"unknown format {kind!r}; choose from {', '.join(FORMATS)}")
    if not 0 < fps <= MAX_FPS:
        raise ValueError(f"frames per second must be in (0, {MAX_FPS}], got {fps}")
    if total < 1:
        raise ValueError("there must be at least one frame")
    target = Path(path)
    check_target(target, kind)  # before the work, and again before the rename
    tmp = _temporary(target)
    stream = _counted(frames, total, progress, cancelled)
    try:
        if kind == "gif":
            _write_gif(stream, tmp, fps)
        elif kind == "mp4":
            _write_mp4(stream, tmp, fps)
        else:
            _write_pngs(stream, tmp)
        check_target(target, kind)
        if kind == "png":
            _replace_frames(tmp, target)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            if tmp.is_dir():
                shutil.rmtree(tmp)
            else:
                tmp.unlink()
        raise
    return target


def _write_gif(frames: Iterator[np.ndarray], path: Path, fps: float) -> None:
    """Frame by frame, each written as it comes: memory stays that of one frame. (Pillow's
    save_all keeps every frame until the end: ~2 MB a frame at 1920x1080, 644 MB at 241
    frames, and the dialog allows 10,000.) Each frame has its own palette of 256 colours,
    as save_all gives it, and is written whole."""
    from PIL import GifImagePlugin, Image

    # GIF delays are in hundredths of a second; Pillow takes milliseconds.
    duration = max(round(100 / fps), 2) * 10
    with open(path, "xb") as f:
        for index, frame in enumerate(frames):
            image = Image.fromarray(frame, "RGB").convert("P", palette=Image.Palette.ADAPTIVE)
            if index == 0:
                header, _ = GifImagePlugin.getheader(image, None, {"loop": 0,
                                                                   "duration": duration})
                f.write(b"".join(header))
            for chunk in GifImagePlugin.getdata(image, (0, 0), duration=duration,
                                                include_color_table=True):
                f.write(chunk)
        f.write(b";")  # the GIF's trailer


def _write_mp4(frames: Iterator[np.ndarray], path: Path, fps: float) -> None:
    import av

    try:
        _encode_mp4(av, frames, path, fps)
    except (OSError, av.error.FFmpegError) as error:
        # PyAV reports a failed write of the file (a full disk) as its own error, '[Errno
        # 1447131472] Error in PyAV callback'; the disk's own error is the one to say.
        cause = error.__context__
        if getattr(error, "errno", None) not in errno.errorcode and isinstance(cause, OSError):
            raise cause from None
        raise


def _encode_mp4(av: Any, frames: Iterator[np.ndarray], path: Path, fps: float) -> None:
    first = next(frames)
    height, width = first.shape[:2]
    with open(path, "xb") as f, av.open(f, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1001))
        stream.width, stream.height = width, height
        stream.pix_fmt = "yuv420p"
        # Crisp flat colours and thin lines: a higher quality than video's default.
        stream.options = {"crf": "16", "preset": "medium"}
        for frame in _chain(first, frames):
            container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")))
        container.mux(stream.encode())


def _write_pngs(frames: Iterator[np.ndarray], folder: Path) -> None:
    from PIL import Image

    folder.mkdir()
    for i, frame in enumerate(frames, start=1):
        Image.fromarray(frame, "RGB").save(folder / f"frame-{i:04d}.png")


def _chain(first: np.ndarray, rest: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    yield first
    yield from rest


Frames = Callable[[TrainingState, list[int]], Iterable[np.ndarray]]


def record(run: TrainingState | tuple[Any, ...], progress: Progress | None,
           cancelled: Cancelled | None, *, frames: Frames, steps: Sequence[int],
           path: str | os.PathLike[str], kind: str, fps: float) -> Path:
    """Write `frames(state, steps)` of a run (a `TrainingState`, or the training process's
    answer that starts with one) as `write_animation` does. What the app runs in a
    process of its own (gradbox.runner.worker): pure work, plain data in and out."""
    state = run[0] if isinstance(run, tuple) else run
    steps = list(steps)
    if steps[-1] > state.step:
        raise RunTooShortError(f"The run has {counted(state.step, 'step')} now, not {steps[-1]}")
    return write_animation(frames(state, steps), len(steps), path, kind, fps, progress,
                           cancelled)


def remove_partials(path: str | os.PathLike[str], pid: int) -> None:
    """Remove what an export killed in the middle (by process id `pid`) left beside `path`:
    its temporary file or folder, whose name carries that id."""
    target = Path(path)
    for left in target.parent.glob(f".{target.name}.{pid}-*.partial"):
        with contextlib.suppress(OSError):
            if left.is_dir():
                shutil.rmtree(left)
            else:
                left.unlink()
