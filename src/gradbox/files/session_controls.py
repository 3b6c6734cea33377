"""The run controls a session keeps beside its run: how fast Run goes, when it stops by
itself, where the timeline stands, the tab on show and teacher mode.

They are the window's choices, not the trainer's, so they are not part of a
`TrainingState`; a session file keeps them in its manifest's "controls" object

    {"speed": 10 | null, "stop": "never" | "steps" | "loss" | "accuracy",
     "stop_value": 100, "position": 40 | null, "tab": "boundary",
     "teacher": false, "workspace": "train" | ""}  (workspace: optional)

`position` is the step the timeline stood at when the file holds steps past it (the
timeline had been moved back, keeping the later steps): the file holds the whole run and
opens at that step, the later steps still ahead. Files without "controls" (older ones)
open with the window's controls as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gradbox.files.session_json import (
    SessionError,
    check_bool,
    check_float,
    check_int,
    check_object,
    check_str,
)

STOP_KINDS = ("never", "steps", "loss", "accuracy")
FIELDS = ("speed", "stop", "stop_value", "position", "tab", "teacher")
OPTIONAL = {"workspace": ""}  # fields added later: a file without one gets this
MAX_SPEED = 1e6
MAX_TAB_NAME = 200


@dataclass(frozen=True)
class SessionControls:
    """What the window's run controls showed when the session was written."""

    speed: float | None = 10.0  # steps per second a Run takes; None: as fast as it can
    stop: str = "never"  # when a Run stops by itself (one of STOP_KINDS)
    stop_value: float = 0.0  # steps, loss, or accuracy in % -- as the stop box shows it
    position: int | None = None  # the timeline's step, when the run goes on past it
    tab: str = ""  # the main view on show, by its objectName ("": the decision boundary)
    teacher: bool = False
    workspace: str = ""  # View > Workspace's key ("": the window as the user arranged it)

    def to_json(self) -> dict[str, Any]:
        return {"speed": self.speed, "stop": self.stop, "stop_value": self.stop_value,
                "position": self.position, "tab": self.tab, "teacher": self.teacher,
                "workspace": self.workspace}


def parse_controls(value: Any, steps: int, path: str = "controls") -> SessionControls:
    """Read the manifest's "controls" strictly; `steps` is how many steps the file holds
    (the position must lie within them). SessionError names the field at fault."""
    if type(value) is dict:
        value = {**OPTIONAL, **value}
    obj = check_object(value, path, (*FIELDS, *OPTIONAL))
    speed = obj["speed"]
    if speed is not None:
        speed = check_float(speed, f"{path}.speed", lo=1e-6, hi=MAX_SPEED)
    position = obj["position"]
    if position is not None:
        position = check_int(position, f"{path}.position", 0, steps)
    tab = check_str(obj["tab"], f"{path}.tab")
    if len(tab) > MAX_TAB_NAME:
        raise SessionError(f"{path}.tab is {len(tab)} characters; at most {MAX_TAB_NAME}")
    workspace = check_str(obj["workspace"], f"{path}.workspace")
    if len(workspace) > MAX_TAB_NAME:
        raise SessionError(f"{path}.workspace is {len(workspace)} characters; at most "
                           f"{MAX_TAB_NAME}")
    return SessionControls(
        speed=speed, stop=check_str(obj["stop"], f"{path}.stop", STOP_KINDS),
        stop_value=check_float(obj["stop_value"], f"{path}.stop_value", lo=0.0, hi=1e9),
        position=position, tab=tab, teacher=check_bool(obj["teacher"], f"{path}.teacher"),
        workspace=workspace)
