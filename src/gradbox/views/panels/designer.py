"""The designer panel: dataset, network and training settings, applied as you edit."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gradbox.autograd import features, losses
from gradbox.autograd.nn import ACTIVATIONS, INIT_LABELS, INITIALIZERS, parameter_count
from gradbox.autograd.optim import OPTIMIZERS, SCHEDULES
from gradbox.port.protocol import SessionPort
from gradbox.teaching import lessons as lesson_names
from gradbox.training import datasets, limits
from gradbox.training.config import (
    MAX_HIDDEN_LAYERS,
    MAX_SEED,
    MIN_SEED,
    ConfigError,
    TrainingConfig,
)
from gradbox.training.goals import MAX_RUN_STEPS
from gradbox.training.snapshots import Snapshot
from gradbox.views.fitting_combo import FittingComboBox
from gradbox.views.panels.typed import parse_number
from gradbox.views.panels.wheel import guard_wheel
from gradbox.views.status_colour import set_tone

APPLY_DELAY_MS = 400  # wait for the user to stop typing before re-creating the model
FEATURE_COLUMNS = 4  # x₁ x₂ x₁² x₂² / x₁x₂ sin x₁ sin x₂: two short rows
LOSS_TIP = "How wrong the scores are; more than two classes always use softmax cross-entropy"
RATES = ("0.001", "0.003", "0.01", "0.03", "0.1", "0.3", "1", "3")
PENALTIES = ("0", "0.0001", "0.001", "0.01", "0.1")


def _tip(widget: QWidget, name: str, tip: str) -> QWidget:
    widget.setAccessibleName(name)
    widget.setToolTip(tip)
    return guard_wheel(widget)  # the wheel scrolls the Designer, not the box under it


def _number_box(values: tuple[str, ...], name: str, tip: str) -> QComboBox:
    """An editable combo: common values one click away, any other value typed in."""
    box = QComboBox()
    box.setEditable(True)
    box.addItems(values)
    box.setInsertPolicy(QComboBox.NoInsert)
    return _tip(box, name, tip)  # type: ignore[return-value]


def _compact(form: QFormLayout) -> QFormLayout:
    """Rows 3 px apart: the whole designer fits a 900-px-high window without scrolling."""
    form.setVerticalSpacing(3)
    return form


class DesignerPanel(QWidget):
    """Edits a TrainingConfig; each valid change goes to the controller after a short pause."""

    refused = Signal(str)  # a committed edit was not applied: why, in the user's words
    checked = Signal()  # the settings were checked again: the status line may say otherwise

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._loading = False
        self._apply_timer = QTimer(self)
        self._apply_timer.setSingleShot(True)
        self._apply_timer.setInterval(APPLY_DELAY_MS)
        self._apply_timer.timeout.connect(self.apply)

        layout = QVBoxLayout(self)
        layout.addWidget(self._data_group())
        layout.addWidget(self._network_group())
        layout.addWidget(self._training_group())
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Designer status")
        self.status.setToolTip("Problems with the settings, and warnings about slow ones")
        layout.addWidget(self.status)
        layout.addStretch(1)

        controller.snapshot_changed.connect(self._on_snapshot)
        self._shown_config: TrainingConfig | None = None
        self._on_snapshot(controller.snapshot)

    # --- groups ----------------------------------------------------------------------
    def _data_group(self) -> QGroupBox:
        group = QGroupBox("Data")
        form = _compact(QFormLayout(group))
        self.kind = _tip(QComboBox(), "Dataset", "Which toy dataset to learn: classes "
                         "above the line, numbers to fit (regression) below it")
        self.kind.addItems(datasets.CLASSIFICATION_KINDS)
        self.kind.insertSeparator(len(datasets.CLASSIFICATION_KINDS))
        self.kind.addItems(datasets.REGRESSION_KINDS)
        self.n_samples = _tip(QSpinBox(), "Points", "How many points to generate")
        # Any count can be typed: past the range the status line says why it is not
        # applied (capped at 2..100,000 the box turned 1e9 into 100000 and 0 into 100
        # without a word).
        self.n_samples.setRange(0, 1_000_000_000)
        self.noise = _tip(QDoubleSpinBox(), "Noise", "How much the points are jittered (0–0.5)")
        self.noise.setRange(0.0, 0.5)
        self.noise.setSingleStep(0.05)
        self.data_seed = _tip(QSpinBox(), "Seed", "Random seed for the points and the weights")
        self.data_seed.setRange(MIN_SEED, MAX_SEED)
        self.test_ratio = _tip(QDoubleSpinBox(), "Test ratio",
                               "Share of points held out for testing (drawn hollow)")
        self.test_ratio.setRange(0.0, 0.9)
        self.test_ratio.setSingleStep(0.1)
        self.classes = _tip(QSpinBox(), "Classes", "Number of clusters (blobs only)")
        self.classes.setRange(2, datasets.MAX_CLASSES)
        for label, widget in (("Dataset", self.kind), ("Points", self.n_samples),
                              ("Noise", self.noise), ("Test ratio", self.test_ratio),
                              ("Classes", self.classes), ("Seed", self.data_seed)):
            form.addRow(label, widget)
        self.kind.currentTextChanged.connect(self._on_kind)
        for spin in (self.n_samples, self.noise, self.data_seed, self.test_ratio, self.classes):
            self._commit_on_finish(spin)
        return group

    def _network_group(self) -> QGroupBox:
        group = QGroupBox("Network")
        box = QVBoxLayout(group)
        self.layers_box = QVBoxLayout()
        box.addLayout(self.layers_box)
        self.layer_spins: list[QSpinBox] = []
        buttons = QHBoxLayout()
        self.add_layer = _tip(QPushButton("+ layer"), "Add hidden layer",
                              "Add a hidden layer (as wide as the last one)")
        self.remove_layer = _tip(QPushButton("− layer"), "Remove hidden layer",
                                 "Remove the last hidden layer")
        self.add_layer.clicked.connect(self._on_add_layer)
        self.remove_layer.clicked.connect(self._on_remove_layer)
        buttons.addWidget(self.add_layer)
        buttons.addWidget(self.remove_layer)
        box.addLayout(buttons)
        form = _compact(QFormLayout())
        self.activation = _tip(QComboBox(), "Activation", "Non-linearity of the hidden neurons")
        self.activation.addItems(ACTIVATIONS)
        self.activation.setObjectName(lesson_names.DESIGNER_ACTIVATION)
        self.activation.currentTextChanged.connect(self._on_edit)
        form.addRow("Activation", self.activation)
        inputs = self._features_grid()
        inputs.setObjectName(lesson_names.DESIGNER_INPUTS)
        form.addRow("Inputs", inputs)
        # Squeezed beside its scale (teacher mode at 1024 x 700), it elides: 'Xavier/Glorc'
        # cut at the frame read as a word, where lesson 9 names Xavier/Glorot.
        self.init = _tip(FittingComboBox(7, size_to_contents=False), "Initialization",
                         "How the weights start (biases start at 0): zeros or a constant "
                         "make every neuron of a layer the same")
        for name in INITIALIZERS:
            self.init.addItem(INIT_LABELS[name], name)
        self.init_scale = _tip(QDoubleSpinBox(), "Init scale", "The bound a of uniform ±a, "
                               "the σ of normal, the constant itself, or a gain on "
                               "Xavier's and He's sizes (1 = as published)")
        self.init_scale.setRange(0.0, 100.0)
        self.init_scale.setDecimals(3)
        self.init_scale.setSingleStep(0.1)
        init_row = QWidget()  # one named place for "Init: constant (scale 0.5)"
        init_row.setObjectName(lesson_names.DESIGNER_INIT)
        row = QHBoxLayout(init_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.init, 1)
        row.addWidget(QLabel("scale"))
        row.addWidget(self.init_scale)
        form.addRow("Init", init_row)
        self.init.currentIndexChanged.connect(self._on_edit)
        self._commit_on_finish(self.init_scale)
        box.addLayout(form)
        self.summary = QLabel()
        self.summary.setObjectName(lesson_names.DESIGNER_SUMMARY)
        self.summary.setAccessibleName("Network summary")
        self.summary.setWordWrap(True)
        self.summary.setToolTip("The network the settings describe")
        box.addWidget(self.summary)
        return group

    def _features_grid(self) -> QWidget:
        """One check box per input feature, Playground's seven."""
        holder = QWidget()
        grid = QGridLayout(holder)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        self.feature_boxes: dict[str, QCheckBox] = {}
        for i, name in enumerate(features.NAMES):
            label = features.FEATURES[name].label
            check = _tip(QCheckBox(label), f"Input {label}",
                         f"Feed {label} to the network as an input; the graph shows how it is "
                         "computed from x₁ and x₂")
            check.toggled.connect(self._on_edit)
            grid.addWidget(check, i // FEATURE_COLUMNS, i % FEATURE_COLUMNS)
            self.feature_boxes[name] = check  # type: ignore[assignment]
        return holder

    def chosen_features(self) -> tuple[str, ...]:
        return tuple(n for n, box in self.feature_boxes.items() if box.isChecked())

    def _training_group(self) -> QGroupBox:
        group = QGroupBox("Training")
        form = _compact(QFormLayout(group))
        self.loss = _tip(FittingComboBox(12, size_to_contents=False), "Loss", LOSS_TIP)
        self._two_class_loss = "hinge"
        for name in losses.ALL_LOSSES:
            self.loss.addItem(losses.MENU[name], name)
        self.optimizer = _tip(QComboBox(), "Optimizer", "How the weights move against their "
                              "gradients")
        for name in OPTIMIZERS:
            self.optimizer.addItem(name.upper() if name == "sgd" else name.capitalize(), name)
        self.lr = _number_box(RATES, "Learning rate", "Step size of each update; type any "
                              "number. A learning rate applies from the next step on")
        self.momentum = _tip(QDoubleSpinBox(), "Momentum", "SGD momentum (0 = plain SGD)")
        self.momentum.setRange(0.0, 0.999)
        self.momentum.setObjectName(lesson_names.DESIGNER_MOMENTUM)
        self.momentum.setSingleStep(0.1)
        self.schedule = _tip(QComboBox(), "Schedule", "How the learning rate changes over "
                             "steps: constant, linear decay to 10% (micrograd's demo), or "
                             "halved every 50 steps")
        self.schedule.addItems(SCHEDULES)
        self.schedule_steps = _tip(QSpinBox(), "Schedule steps", "Steps over which the linear "
                                   "schedule decays")
        self.schedule_steps.setRange(1, MAX_RUN_STEPS)
        self.batch = _tip(QSpinBox(), "Batch size", "Points per step; 0 means all training "
                          "points (full batch)")
        self.batch.setRange(0, 100_000)
        self.batch.setSpecialValueText("full batch")
        self.l1 = _number_box(PENALTIES, "L1", "Strength of the L1 penalty sum(|w|)")
        self.l2 = _number_box(PENALTIES, "L2", "Strength of the L2 penalty sum(w²)")
        for label, widget in (("Loss", self.loss), ("Optimizer", self.optimizer),
                              ("Learning rate", self.lr), ("Momentum", self.momentum),
                              ("Schedule", self.schedule), ("Schedule steps", self.schedule_steps),
                              ("Batch size", self.batch), ("L1", self.l1), ("L2", self.l2)):
            form.addRow(label, widget)
        for combo in (self.loss, self.optimizer, self.schedule):
            combo.currentIndexChanged.connect(self._on_edit)
        for combo in (self.lr, self.l1, self.l2):
            # Typing only checks the text; Enter, Tab, leaving the box or picking a
            # value from the list applies it.
            combo.currentTextChanged.connect(self._on_typing)
            combo.lineEdit().editingFinished.connect(self._on_commit)
            combo.activated.connect(self._on_commit)
        for spin in (self.momentum, self.schedule_steps, self.batch):
            self._commit_on_finish(spin)
        return group

    def _commit_on_finish(self, spin: QAbstractSpinBox) -> None:
        """Typed digits wait for Enter, Tab or focus-out (no model is rebuilt from a
        half-typed 1 of 100); the arrows and the wheel apply after a short pause."""
        spin.setKeyboardTracking(False)
        spin.valueChanged.connect(self._on_edit)
        spin.editingFinished.connect(self._on_commit)

    # --- hidden layers -----------------------------------------------------------------------
    def _set_layers(self, sizes: tuple[int, ...]) -> None:
        while len(self.layer_spins) > len(sizes):
            spin = self.layer_spins.pop()
            self.layers_box.removeWidget(spin)
            spin.deleteLater()
        while len(self.layer_spins) < len(sizes):
            index = len(self.layer_spins)
            spin = _tip(QSpinBox(), f"Hidden layer {index + 1} neurons",
                        f"Neurons in hidden layer {index + 1}")
            # Past MAX_WIDTH the status line says why it is not applied (a
            # spin box capped there would drop the digits typed, without a word).
            spin.setRange(1, 1_000_000)
            spin.setPrefix(f"layer {index + 1}: ")
            spin.setSuffix(" neurons")
            self._commit_on_finish(spin)
            self.layer_spins.append(spin)
            self.layers_box.addWidget(spin)
        for spin, size in zip(self.layer_spins, sizes):
            spin.setValue(size)
        # Tab goes through the layers where they stand, after the data's Seed (made
        # later, they came after L2: Tab left the Network group and came back last).
        chain = [self.data_seed, *self.layer_spins, self.add_layer]
        for before, after in itertools.pairwise(chain):
            QWidget.setTabOrder(before, after)
        self.remove_layer.setEnabled(bool(sizes))
        full = len(sizes) >= MAX_HIDDEN_LAYERS
        self.add_layer.setEnabled(not full)
        self.add_layer.setToolTip(f"At most {MAX_HIDDEN_LAYERS} hidden layers" if full
                                  else "Add a hidden layer (as wide as the last one)")

    @Slot()
    def _on_add_layer(self) -> None:
        sizes = self.hidden()
        self._set_layers((*sizes, sizes[-1] if sizes else 8))
        self._on_edit()

    @Slot()
    def _on_remove_layer(self) -> None:
        self._set_layers(self.hidden()[:-1])
        self._on_edit()

    def hidden(self) -> tuple[int, ...]:
        return tuple(spin.value() for spin in self.layer_spins)

    # --- config <-> widgets --------------------------------------------------------------
    def config(self) -> TrainingConfig:
        """The configuration the widgets describe; raises ConfigError naming a bad field."""
        def number(box: QComboBox, name: str) -> float:
            try:
                return parse_number(box.currentText())
            except ValueError as error:
                raise ConfigError(f"{name} must be a finite number: {error}") from None

        return TrainingConfig(
            dataset=self.kind.currentText(), n_samples=self.n_samples.value(),
            noise=self.noise.value(), test_ratio=self.test_ratio.value(),
            classes=self.classes.value(), hidden=self.hidden(),
            activation=self.activation.currentText(), loss=self._chosen_loss(),
            optimizer=self.optimizer.currentData(), lr=number(self.lr, "learning rate"),
            momentum=self.momentum.value(), schedule=self.schedule.currentText(),
            batch_size=self.batch.value() or None, l1=number(self.l1, "L1"),
            l2=number(self.l2, "L2"), seed=self.data_seed.value(),
            steps=self.schedule_steps.value(), features=self.chosen_features(),
            init=self.init.currentData(), init_scale=self.init_scale.value())

    def show_config(self, config: TrainingConfig) -> None:
        self._loading = True
        try:
            self.kind.setCurrentText(config.dataset)
            self.n_samples.setValue(config.n_samples)
            self.noise.setValue(config.noise)
            self.test_ratio.setValue(config.test_ratio)
            self.classes.setValue(config.classes)
            self.data_seed.setValue(config.seed)
            self._set_layers(config.hidden)
            self.activation.setCurrentText(config.activation)
            self.loss.setCurrentIndex(self.loss.findData(config.loss))
            self.optimizer.setCurrentIndex(self.optimizer.findData(config.optimizer))
            self.lr.setCurrentText(f"{config.lr:g}")
            self.momentum.setValue(config.momentum)
            self.schedule.setCurrentText(config.schedule)
            self.schedule_steps.setValue(config.steps)
            self.batch.setValue(config.batch_size or 0)
            self.l1.setCurrentText(f"{config.l1:g}")
            self.l2.setCurrentText(f"{config.l2:g}")
            for name, check in self.feature_boxes.items():
                check.setChecked(name in config.features)
            self.init.setCurrentIndex(self.init.findData(config.init))
            self.init_scale.setValue(config.init_scale)
        finally:
            self._loading = False
        self._shown_config = config
        self._refresh_hints(config)

    def _chosen_loss(self) -> str:
        """The loss picked for two classes; while more classes force softmax the box shows
        softmax, but the choice is kept for when the classes go back to two."""
        return self._two_class_loss if not self.loss.isEnabled() else self.loss.currentData()

    def _show_effective_loss(self, config: TrainingConfig) -> None:
        forced = config.effective_loss != config.loss
        self._two_class_loss = config.loss
        self.loss.blockSignals(True)
        self.loss.setCurrentIndex(self.loss.findData(config.effective_loss))
        self.loss.blockSignals(False)
        self.loss.setEnabled(not forced)
        self.loss.setToolTip(
            f"{config.effective_classes} classes need one score per class, and only softmax "
            f"cross-entropy compares several scores; {losses.MENU[config.loss]} scores one "
            "output and comes back with two classes" if forced else LOSS_TIP)

    def _refresh_hints(self, config: TrainingConfig) -> None:
        self._show_effective_loss(config)
        self.classes.setEnabled(config.dataset == "blobs")
        self.momentum.setEnabled(config.optimizer == "sgd")
        self.schedule_steps.setEnabled(config.schedule == "linear")
        self.init_scale.setEnabled(config.init != "zeros")
        one_d = config.dataset in datasets.ONE_D_KINDS
        for name, check in self.feature_boxes.items():
            check.setEnabled(not (one_d and features.FEATURES[name].uses_x2))
        # Only the losses that fit the task can be picked.
        allowed = losses.REGRESSION_LOSSES if config.is_regression else losses.LOSSES
        model = self.loss.model()
        for i in range(self.loss.count()):
            model.item(i).setEnabled(self.loss.itemData(i) in allowed)
        sizes = config.layer_sizes
        self.summary.setText(f"MLP({sizes[0]}, {list(sizes[1:])}) · "
                             f"{parameter_count(sizes):,} parameters")
        notes = []
        if config.effective_loss != config.loss:
            notes.append(f"Loss: softmax cross-entropy, because {config.effective_classes} "
                         "classes need one output per class (the loss chosen for two classes, "
                         f"{losses.MENU[config.loss]}, scores one output).")
        if config.effective_features != config.features:
            notes.append("A 1-D function has x₁ alone: inputs of x₂ are left out.")
        if notes:
            set_tone(self.status, "quiet")
            self.status.setText(" ".join(notes))
            return
        warning = limits.slow_warning(config)
        set_tone(self.status, "caution" if warning else "")
        self.status.setText(f"⚠ {warning}" if warning else "")

    # --- applying ----------------------------------------------------------------------
    def _checked(self) -> TrainingConfig | None:
        """The described configuration with its hints shown, or None with the problem."""
        try:
            config = self.config()
            # Refused before anything is built: a network that cannot fit in memory.
            too_big = limits.fits_in_memory(config)
            if too_big:
                raise ConfigError(too_big)
        except ConfigError as error:
            self._apply_timer.stop()
            set_tone(self.status, "alarm")
            self.status.setText(f"Not applied: {error}")
            self.checked.emit()
            return None
        self._refresh_hints(config)
        self.checked.emit()
        return config

    @Slot()
    def _on_kind(self) -> None:
        """A regression dataset wants a regression loss, and classes a class loss: the
        loss box follows (MSE or hinge), so what it shows is what trains."""
        if not self._loading:
            regression = self.kind.currentText() in datasets.REGRESSION_KINDS
            allowed = losses.REGRESSION_LOSSES if regression else losses.LOSSES
            if self.loss.currentData() not in allowed:
                self._loading = True
                try:
                    self.loss.setCurrentIndex(self.loss.findData(allowed[0] if regression
                                                                 else "hinge"))
                finally:
                    self._loading = False
        self._on_edit()

    @Slot()
    def _on_edit(self) -> None:
        if not self._loading and self._checked() is not None:
            self._apply_timer.start()

    @Slot()
    def _on_typing(self) -> None:
        """Say at once whether the text being typed is usable; apply nothing yet."""
        if not self._loading:
            self._checked()

    @Slot()
    def _on_commit(self) -> None:
        """A field was committed (Enter, Tab, focus-out, a pick): apply now if it changed
        anything, so a Step pressed right after already uses it."""
        if self._loading:
            return
        config = self._checked()
        if config is None:
            # The fields show what the run uses, never a refused value (the rate box kept
            # '1e999' while the run went on at 0.5): the refusal quotes what was typed.
            refusal = self.status.text()
            self.show_config(self.controller.snapshot.config)
            set_tone(self.status, "alarm")
            self.status.setText(f"{refusal} (the fields show the settings the run uses)")
            # The status line sits below the fields, often scrolled out of a small
            # window: say it where it is seen too, for as long as it is so.
            self.refused.emit(self.status.text())
            return
        if config != self._shown_config or self._apply_timer.isActive():
            self.apply()

    def has_pending_edit(self) -> bool:
        """An edit waits to apply (the user may still be typing)."""
        return self._apply_timer.isActive()

    def cancel_pending(self) -> bool:
        """Undo pressed while an edit waits to apply: the edit is dropped and the fields
        show the session's settings again (applied 400 ms later, it replaced the run Undo
        had just brought back). True if there was one."""
        if not self._apply_timer.isActive():
            return False
        self._apply_timer.stop()
        self.show_config(self.controller.snapshot.config)
        return True

    @Slot()
    def apply(self) -> None:
        """Send the current settings to the session now (normally done after a pause)."""
        self._apply_timer.stop()
        config = self._checked()
        if config is None:
            return
        self._shown_config = config
        self.controller.apply_config(config)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        # Follow the session (a loaded file, a rebuild) unless the user is mid-edit.
        if snapshot.config != self._shown_config and not self._apply_timer.isActive():
            self.show_config(snapshot.config)
