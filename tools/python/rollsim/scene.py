"""The look of a run: the ``/scene`` group of a result file (format 1), and the scene drawn with matplotlib.

``load(path)`` reads a result file with ``rollsim.h5.load`` (once) and returns a ``Scene``: its drawables (shapes
with a pose, point kinds), the sample times, the events and the modes with the names the file gives them.
``Scene.at(t)`` gives every drawable's values at a time, interpolated linearly between the samples (a rotation
between two samples is made orthonormal again); a value that is NaN at either neighbouring sample is NaN, and a
viewer hides it.  ``draw(ax, scene, t)`` draws the scene at ``t`` into a matplotlib axes, in the x-y plane for a
planar scene, else in an orthographic projection (``View``); the video of ``rollsim.animate`` and the snapshot
view of ``rollsim.plot`` use it.  The format is described in docs/animate.md.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import warnings

import numpy as np

from . import h5

SCENE_FORMAT = 1
POSE_KINDS = ("disk", "sphere", "box", "plane")
POINT_KINDS = ("line", "polygon", "circle", "point", "trail", "contact")
SERIES = ("position", "rotation", "points", "force", "normal")  # the datasets a drawable may have, per sample
SIZE_ATTRS = ("radius", "thickness", "half_extents", "half_size", "width", "contact")


class SceneError(h5.RollsimFileError):
    """The file has no ``/scene`` group, or one this reader does not understand."""


@dataclasses.dataclass
class Drawable:
    """One drawable of ``/scene``: its attributes, and its datasets with one row (static) or one per sample."""

    name: str
    kind: str
    role: str
    color: str
    static: bool
    attrs: dict
    data: dict  # dataset name -> array, rows first (position: rows x 3, rotation: rows x 3 x 3, points: rows x k x 3)

    def size(self, key: str, default=0.0):
        return self.attrs.get(key, default)


@dataclasses.dataclass
class Scene:
    """A result file's scene and what a viewer shows beside it (the time, the events, the modes)."""

    path: str
    title: str
    model: str
    dimension: int
    length_unit: str
    extent: np.ndarray          # xmin, xmax, ymin, ymax, zmin, zmax
    time: np.ndarray            # the samples' times (/trajectory/time)
    drawables: list
    events: list                # (time, kind) in file order
    mode: Optional[np.ndarray]  # the trajectory's mode per sample, or None
    mode_names: dict            # mode -> name (the file's mode_name_M)

    @property
    def n(self) -> int:
        return int(self.time.size)

    def bracket(self, t: float):
        """(i, w): the value at ``t`` is (1 - w) row i + w row i + 1 (w in [0, 1]; i + 1 = i at the ends).  At a
        time the file holds twice (before and after an event), the later row."""
        tt = self.time
        if tt.size == 1 or t <= tt[0]:
            return 0, 0.0
        if t >= tt[-1]:
            return tt.size - 1, 0.0
        i = int(np.searchsorted(tt, t, side="right")) - 1
        dt = tt[i + 1] - tt[i]
        return i, float((t - tt[i]) / dt) if dt > 0 else 0.0

    def value(self, d: Drawable, key: str, t: float):
        """Drawable ``d``'s dataset ``key`` at time ``t`` (None when it has none)."""
        if key not in d.data:
            return None
        a = d.data[key]
        if d.static:
            return a[0]
        i, w = self.bracket(t)
        if w == 0.0:
            v = a[i]
        else:
            v = (1.0 - w) * a[i] + w * a[i + 1]
            if key == "rotation" and np.all(np.isfinite(v)):
                u, _, vt = np.linalg.svd(v)  # the nearest rotation to the blend of two
                v = u @ vt
        return v

    def at(self, t: float) -> dict:
        """{drawable name: {dataset: value at t}} for every drawable."""
        return {d.name: {k: self.value(d, k, t) for k in d.data} for d in self.drawables}

    def mode_at(self, t: float):
        """The mode the run was in at ``t`` (the sample's at or before t), or None for a model without modes."""
        if self.mode is None:
            return None
        i = max(int(np.searchsorted(self.time, t, side="right")) - 1, 0)
        return int(self.mode[i])

    def mode_name(self, m) -> str:
        return "" if m is None else self.mode_names.get(m, f"mode {m}")

    def trail(self, d: Drawable, t: float) -> np.ndarray:
        """The path of a one-point drawable up to ``t`` (rows x 3), ending at its interpolated point."""
        pts = d.data["points"][:, 0, :]
        if d.static:
            return pts[:1]
        i, _ = self.bracket(t)
        return np.vstack([pts[: i + 1], self.value(d, "points", t)[0][None, :]])


def _drawable(table) -> Drawable:
    a = table.attrs
    data = {}
    for key in SERIES:
        if key in table:
            v = np.asarray(table[key], dtype=float)
            data[key] = v.reshape(v.shape[0], 3, 3) if key == "rotation" else v
    attrs = {k: a[k] for k in SIZE_ATTRS if k in a}
    return Drawable(name=str(a.get("name", "")), kind=str(a.get("kind", "")), role=str(a.get("role", "")),
                    color=str(a.get("color", "#808080")), static=bool(int(a.get("static", 0))), attrs=attrs,
                    data=data)


def from_result(r) -> Scene:
    """The scene of a loaded result (``rollsim.h5.load``); SceneError when it has none."""
    from .plot import mode_names  # the legends' names of the modes, from the file's mode_name_M

    sc = r.scene
    if sc is None:
        if r.sweep is not None:
            raise SceneError(r.path, "a sweep's file has no /scene: choose one of its points (--point N)")
        raise SceneError(r.path, "no /scene group: the file says nothing about how the model looks")
    fmt = int(sc.attrs.get("format", 0))
    if fmt != SCENE_FORMAT:
        raise SceneError(r.path, f"/scene has format {fmt}; this reader knows format {SCENE_FORMAT}")
    time = np.asarray(r.trajectory.get("time", np.zeros(0)), dtype=float)
    if time.size == 0:
        raise SceneError(r.path, "/scene without samples: the file has no /trajectory/time")
    drawables = [_drawable(sc[name]) for name in sc.order if isinstance(sc.get(name), h5.Table)]
    ev = r.events or {}
    events = [(float(t), str(k)) for t, k in zip(ev.get("time", []), ev.get("kind", []))]
    tr = r.trajectory
    modes = tr.with_role("mode") or (["mode"] if "mode" in tr else [])
    mode = np.asarray(tr[modes[0]]).astype(int) if modes else None
    names = {m: name.removeprefix("mode ") for m, name in mode_names(r).items()}
    extent = np.asarray(sc.attrs.get("extent", [0, 1, 0, 1, 0, 0]), dtype=float).ravel()
    return Scene(path=r.path, title=r.title, model=r.model, dimension=int(sc.attrs.get("dimension", 3)),
                 length_unit=str(sc.attrs.get("length_unit", "m")), extent=extent, time=time, drawables=drawables,
                 events=events, mode=mode, mode_names=names)


def load(path, allow_incomplete: bool = False) -> Scene:
    """The scene of a result file (RollsimFileError for a bad file, SceneError for one without a scene)."""
    return from_result(h5.load(path, allow_incomplete=allow_incomplete))


def frame_indices(scene: Scene, max_frames: int) -> np.ndarray:
    """At most about ``max_frames`` sample indices to show a long run by: evenly spaced ones, the first and the
    last, and the samples either side of every event (so that an impact is not skipped)."""
    n = scene.n
    if n <= max_frames:
        return np.arange(n)
    keep = set(np.linspace(0, n - 1, max_frames - 2 * min(len(scene.events), max_frames // 4)).round().astype(int))
    for t, _ in scene.events[: max_frames // 4]:
        i = int(np.searchsorted(scene.time, t))
        keep.update((max(i - 1, 0), min(i, n - 1)))
    keep.update((0, n - 1))
    return np.array(sorted(keep))


# --------------------------------------------------------------------------
# drawing with matplotlib


@dataclasses.dataclass
class View:
    """An orthographic view: a planar scene's x-y plane, or a 3-D scene seen from azimuth ``azim`` and elevation
    ``elev`` (degrees, z up).  ``project`` maps world points (... x 3) to (u, v) and a depth (larger: nearer)."""

    dimension: int
    azim: float = -60.0
    elev: float = 25.0

    def axes(self):
        a, e = math.radians(self.azim), math.radians(self.elev)
        towards = np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)])  # to the viewer
        right = np.array([-math.sin(a), math.cos(a), 0.0])
        up = np.cross(towards, right)
        return right, up, towards

    def facing(self, normal) -> float:
        """How much a face with this outward normal faces the viewer (> 0: it does)."""
        towards = np.array([0.0, 0.0, 1.0]) if self.dimension == 2 else self.axes()[2]
        return float(np.dot(normal, towards))

    def project(self, p):
        p = np.asarray(p, dtype=float)
        if self.dimension == 2:
            return p[..., :2], p[..., 2]
        right, up, towards = self.axes()
        return np.stack([p @ right, p @ up], axis=-1), p @ towards


def _circle(centre, e1, e2, radius, n=48):
    s = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return centre + radius * (np.outer(np.cos(s), e1) + np.outer(np.sin(s), e2))


def _frame_axes(normal):
    normal = normal / np.linalg.norm(normal)
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(normal, helper)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(normal, e1)


def shapes(scene: Scene, d: Drawable, t: float, force_scale: float) -> list:
    """Drawable ``d`` at ``t`` as world-coordinate primitives: (what, points, style) with what "fill" (a closed,
    filled outline), "line" (a polyline), "dot" (a point with a world radius: points is 1 x 3, style["radius"]) or
    "arrow" (two points).  A face of a solid has style["normal"], its outward normal: a viewer draws the faces
    that face it.  Empty where its value is NaN at ``t``."""
    v = {k: scene.value(d, k, t) for k in d.data}
    if not all(np.all(np.isfinite(v[k])) for k in ("position", "rotation", "points") if k in v):
        return []  # not formed at t (a contact after lift-off): hidden
    out = []
    if d.kind in POSE_KINDS:
        c, R = v["position"], v["rotation"]
        ex, ey, ez = R[:, 0], R[:, 1], R[:, 2]
        if d.kind == "disk":
            r, h = float(d.size("radius")), float(d.size("thickness"))
            for side in (-0.5, 0.5):
                out.append(("fill", _circle(c + side * h * ez, ex, ey, r), {"normal": side * ez}))
            out.append(("line", np.array([c, c + r * ex]), {"marker": True}))
        elif d.kind == "sphere":
            r = float(d.size("radius"))
            out.append(("dot", c[None, :], {"radius": r}))
            out.append(("line", np.vstack([_circle(c, ex, ez, r), c + r * ex]), {"marker": True, "thin": True}))
            out.append(("line", np.array([c, c + r * ex]), {"marker": True}))
        elif d.kind == "box":
            hx, hy, hz = np.ravel(d.size("half_extents", [0.5, 0.5, 0.5]))
            corner = lambda sx, sy, sz: c + sx * hx * ex + sy * hy * ey + sz * hz * ez  # noqa: E731
            for axis in range(3):
                for s in (-1, 1):
                    q = [(1, 1), (1, -1), (-1, -1), (-1, 1)]
                    pts = [corner(*np.insert(np.array(ab, dtype=float), axis, s)) for ab in q]
                    out.append(("fill", np.array(pts), {"normal": s * R[:, axis]}))
        else:  # plane
            sx, sy = np.ravel(d.size("half_size", [1.0, 1.0]))
            pts = [c + a * sx * ex + b * sy * ey for a, b in ((1, 1), (1, -1), (-1, -1), (-1, 1))]
            out.append(("fill", np.array(pts), {"alpha": 0.35}))
        return out
    pts = v["points"]
    if d.kind == "line":
        out.append(("line", pts, {"width": float(d.size("width", 0.0))}))
    elif d.kind == "polygon":
        out.append(("fill", pts, {}))
    elif d.kind == "circle":
        normal = v.get("normal")
        e1, e2 = _frame_axes(np.array([0.0, 0.0, 1.0]) if normal is None else np.asarray(normal, dtype=float))
        out.append(("fill", _circle(pts[0], e1, e2, float(d.size("radius"))), {}))
    elif d.kind == "point":
        out.append(("dot", pts[:1], {"radius": float(d.size("radius", 0.0))}))
    elif d.kind == "trail":
        out.append(("line", scene.trail(d, t), {"thin": True}))
    elif d.kind == "contact":
        out.append(("dot", pts[:1], {"radius": 0.0, "contact": True}))
        f = v.get("force")
        if f is not None and force_scale > 0 and np.all(np.isfinite(f)) and np.linalg.norm(f) > 0:
            out.append(("arrow", np.array([pts[0], pts[0] + force_scale * np.asarray(f)]), {}))
    return out


def extent_size(scene: Scene) -> float:
    """The scene's size: the largest side of its extent (1 when it is a point)."""
    e = scene.extent
    return float(max(e[1] - e[0], e[3] - e[2], e[5] - e[4])) or 1.0


def body_span(scene: Scene) -> float:
    """The bodies' size: the largest side, over the samples, of the box around the drawables of role ``body`` at one
    sample (their centres and points, widened by their radii and half extents); 0 when there is none."""
    span = 0.0
    lo = hi = None
    for d in scene.drawables:
        if d.role != "body":
            continue
        if "position" in d.data:
            pts = np.asarray(d.data["position"], dtype=float)[:, None, :]
            pad = max(float(d.size("radius")), float(np.linalg.norm(d.size("half_extents", [0.0, 0.0, 0.0]))))
        elif "points" in d.data:
            pts = np.asarray(d.data["points"], dtype=float)
            pad = max(float(d.size("radius")), float(d.size("width")) / 2)
        else:
            continue
        with warnings.catch_warnings():  # a row of NaN (a body not drawn at that sample) stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            a, b = np.nanmin(pts, axis=1) - pad, np.nanmax(pts, axis=1) + pad  # rows x 3 (one row when static)
        lo = a if lo is None else np.fmin(lo, a)
        hi = b if hi is None else np.fmax(hi, b)
    if lo is not None:
        span = float(np.nanmax(hi - lo)) if np.any(np.isfinite(hi - lo)) else 0.0
    return span


def follows(scene: Scene) -> bool:
    """Whether a view should follow the bodies: they travel over more than four times their own size."""
    span = body_span(scene)
    return span > 0 and extent_size(scene) > 4 * span


def force_scale(scene: Scene) -> float:
    """Metres per newton of the force arrows: the largest contact force is a quarter of the scene's size."""
    largest = 0.0
    for d in scene.drawables:
        if d.kind == "contact" and "force" in d.data:
            f = np.linalg.norm(d.data["force"], axis=-1)
            if np.any(np.isfinite(f)):
                largest = max(largest, float(np.nanmax(f)))
    return 0.25 * extent_size(scene) / largest if largest > 0 else 0.0


def set_limits(ax, scene: Scene, view: View, margin: float = 0.08):
    """Axes limits that hold the scene's extent in this view, with equal scales."""
    e = scene.extent
    corners = np.array([[x, y, z] for x in e[0:2] for y in e[2:4] for z in e[4:6]])
    uv, _ = view.project(corners)
    lo, hi = uv.min(axis=0), uv.max(axis=0)
    pad = margin * max(float(np.max(hi - lo)), 1e-9)
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal", adjustable="datalim")


def _points_per_metre(ax) -> float:
    x0, x1 = ax.get_xlim()
    width_pt = ax.get_window_extent().width * 72.0 / ax.figure.dpi
    return width_pt / max(abs(x1 - x0), 1e-12)


def draw(ax, scene: Scene, t: float, view: Optional[View] = None, alpha: float = 1.0, forces: bool = True,
         roles=None, skip_kinds=(), zorder: float = 2.0) -> list:
    """Draw the scene at time ``t`` into ``ax`` (limits set beforehand: set_limits); returns the artists.
    ``alpha`` scales every opacity (the snapshot's older instants), ``roles`` limits the drawables drawn by role,
    ``skip_kinds`` leaves out kinds (the snapshot's trails but the last); ``zorder`` is the first drawable's."""
    from matplotlib.patches import Circle, FancyArrowPatch, Polygon

    view = view or View(scene.dimension)
    scale = force_scale(scene) if forces else 0.0
    ppm = _points_per_metre(ax)
    dot = 0.012 * extent_size(scene)
    items = []
    for order, d in enumerate(scene.drawables):
        if (roles is not None and d.role not in roles) or d.kind in skip_kinds:
            continue
        for what, pts, style in shapes(scene, d, t, scale):
            uv, depth = view.project(pts)
            z = zorder + order * 0.1 + (0.0 if scene.dimension == 2 else 0.01 * float(np.tanh(np.mean(depth))))
            a = alpha * style.get("alpha", 1.0)
            if "normal" in style and view.facing(style["normal"]) <= 1e-9:
                continue  # a face turned away (and a flat box's sides): hidden, so that faint solids stay faint
            if what == "fill":
                items.append(Polygon(uv, closed=True, facecolor=d.color, edgecolor="black", linewidth=0.5, alpha=a,
                                     zorder=z))
            elif what == "dot":
                radius = style["radius"] or dot
                edge = "black" if style.get("contact") else d.color
                items.append(Circle(uv[0], radius, facecolor=d.color, edgecolor=edge, linewidth=0.5, alpha=a,
                                    zorder=z + (0.05 if style.get("contact") else 0.0)))
            elif what == "arrow":
                items.append(FancyArrowPatch(uv[0], uv[1], arrowstyle="-|>", mutation_scale=8, color=d.color,
                                             alpha=a, zorder=z + 0.06, linewidth=1.2))
            else:
                width = style.get("width", 0.0) * ppm
                colour = "black" if style.get("marker") else d.color
                lw = max(width, 0.6 if style.get("thin") else 1.0)
                line = ax.plot(uv[:, 0], uv[:, 1], color=colour, linewidth=lw, alpha=a, zorder=z + 0.02,
                               solid_capstyle="round")[0]
                items.append(line)
    for item in items:
        if not hasattr(item, "get_xydata"):
            ax.add_patch(item)
    return items
