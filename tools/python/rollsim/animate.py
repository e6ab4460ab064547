"""Animations of a run from its ``/scene``: a self-contained HTML page (three.js) and a video (MP4 or GIF).

    write_html(result_path, out_path, point=None)
    write_video(result_path, out_path, fps=25, speed=1.0, point=None)

``write_html`` writes one page that needs no network: three.js from Debian's libjs-three and its OrbitControls
inlined, the scene's values embedded as JSON (at most MAX_FRAMES samples of a long run: evenly spaced ones and
those either side of each event; the page says how many it shows).  ``write_video`` draws the scene with
matplotlib (rollsim.scene.draw) at ``fps`` frames per second of video and ``speed`` seconds of simulated time per
second of video, through ffmpeg (.mp4) or Pillow (.gif).  ``point=N`` animates point N of a sweep's file by
running it again (run_point).  The command line is tools/animate (``main``); docs/animate.md describes both.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import h5, scene as scene_mod

MAX_FRAMES = 2000
THREE_DIR = os.environ.get("ROLLSIM_THREE_DIR", "/usr/share/javascript/three")
THREE_JS = ("three.min.js", os.path.join("examples", "js", "controls", "OrbitControls.js"))
DEFAULT_FPS = 25
DEFAULT_SPEED = 1.0
VIDEO_SUFFIXES = (".mp4", ".gif")


class AnimateError(Exception):
    """Bad input: a file without a scene, a point out of range, an output that cannot be written."""


# --------------------------------------------------------------------------
# a sweep's point


def program() -> str:
    """The rollsim program: $ROLLSIM_BINARY, else build/rollsim of this source tree, else rollsim on the PATH."""
    env = os.environ.get("ROLLSIM_BINARY")
    if env:
        return env
    here = os.path.dirname(os.path.realpath(__file__))
    built = os.path.normpath(os.path.join(here, "..", "..", "..", "build", "rollsim"))
    if os.access(built, os.X_OK):
        return built
    found = shutil.which("rollsim")
    if not found:
        raise AnimateError("no rollsim program to run the point with: set ROLLSIM_BINARY or build it (tools/build)")
    return found


def _override(value) -> str:
    """A sweep table's value as the text of --set KEY=VALUE (a string quoted as TOML writes it)."""
    v = np.asarray(value).item() if np.ndim(value) == 0 else value
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


def point_overrides(result, index: int) -> list:
    """["KEY=VALUE", ...] of sweep point ``index``: its row of the sweep table's swept columns."""
    sw = result.sweep
    if sw is None or sw.nrows == 0:
        raise AnimateError(f"{result.path}: --point needs a sweep's file (rollsim sweep); this one has no /sweep")
    if not 0 <= index < sw.nrows:
        raise AnimateError(f"{result.path}: no sweep point {index} (the sweep has points 0..{sw.nrows - 1})")
    keys = result.swept_keys
    if not keys:
        raise AnimateError(f"{result.path}: the sweep table names no swept keys")
    return [f"{k}={_override(sw[k][index])}" for k in keys]


def run_point(sweep_path, index: int, workdir: str) -> str:
    """Run sweep point ``index`` of ``sweep_path`` again into ``workdir``: `rollsim run` on the file's
    /scenario/resolved text with --set for each swept key.  Returns the result file's path."""
    r = h5.load(sweep_path)
    sets = point_overrides(r, index)
    if not r.scenario_resolved.strip():
        raise AnimateError(f"{sweep_path}: no /scenario/resolved text to run the point from")
    toml = os.path.join(workdir, f"point_{index}.toml")
    with open(toml, "w", encoding="utf-8") as f:
        f.write(r.scenario_resolved)
    out = os.path.join(workdir, f"point_{index}.h5")
    cmd = [program(), "run", toml, "-o", out, "-q"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        raise AnimateError(f"running sweep point {index} ({', '.join(sets)}) failed with exit {p.returncode}: "
                           f"{p.stderr.strip()[-800:]}")
    return out


def _scene(result_path, point, workdir):
    if point is None:
        return scene_mod.load(result_path)
    path = run_point(result_path, point, workdir)
    try:
        sc = scene_mod.load(path)
    except scene_mod.SceneError:
        raise AnimateError(f"{result_path}: sweep point {point}, run again, has no /scene (its model declares no "
                           "drawing)") from None
    sc.title = f"{sc.title} — sweep point {point}".strip(" —")
    return sc


def _check_output(out_path, suffixes):
    folder = os.path.dirname(os.path.abspath(out_path))
    if not os.path.isdir(folder):
        raise AnimateError(f"cannot write {out_path}: folder {folder} does not exist")
    ext = os.path.splitext(out_path)[1].lower()
    if ext not in suffixes:
        raise AnimateError(f"cannot write {out_path}: the suffix must be one of {', '.join(suffixes)}")


# --------------------------------------------------------------------------
# the page


def _numbers(a, decimals: int) -> str:
    """A numeric array as JSON (rounded; NaN as null)."""
    text = json.dumps(np.round(np.asarray(a, dtype=float), decimals).tolist(), separators=(",", ":"))
    return re.sub(r"\bNaN\b", "null", text)


def page_data(sc, max_frames: int = MAX_FRAMES) -> str:
    """The page's data as JSON text: the frames' times and modes, the events, and each drawable at the frames."""
    idx = scene_mod.frame_indices(sc, max_frames)
    size = scene_mod.extent_size(sc)
    decimals = max(3, 7 - int(math.floor(math.log10(size))))  # 1e-7 of the scene's size
    parts = {
        "title": json.dumps(sc.title), "model": json.dumps(sc.model), "file": json.dumps(os.path.basename(sc.path)),
        "dimension": str(sc.dimension), "unit": json.dumps(sc.length_unit), "extent": _numbers(sc.extent, decimals),
        "size": repr(size), "force_scale": repr(scene_mod.force_scale(sc)),
        "span": repr(scene_mod.body_span(sc)), "follow": "true" if scene_mod.follows(sc) else "false",
        "n_samples": str(sc.n), "times": _numbers(sc.time[idx], 12),
        "mode": json.dumps([int(m) for m in sc.mode[idx]]) if sc.mode is not None else "null",
        "mode_names": json.dumps({str(m): sc.mode_name(m) for m in
                                  (sorted(set(int(x) for x in sc.mode)) if sc.mode is not None else [])}),
        "events": json.dumps([[t, k] for t, k in sc.events]),
    }
    drawables = []
    for d in sc.drawables:
        fields = {"name": json.dumps(d.name), "kind": json.dumps(d.kind), "role": json.dumps(d.role),
                  "color": json.dumps(d.color), "static": "true" if d.static else "false"}
        for k, v in d.attrs.items():
            fields[k] = json.dumps(v) if isinstance(v, str) else _numbers(v, decimals)
        for k, v in d.data.items():
            rows = v if d.static else v[idx]
            rows = rows.reshape(rows.shape[0], 9) if k == "rotation" else rows
            fields[k] = _numbers(rows, decimals if k != "force" else 6)
        drawables.append("{" + ",".join(f'"{k}":{v}' for k, v in fields.items()) + "}")
    parts["drawables"] = "[" + ",\n".join(drawables) + "]"
    return "{" + ",\n".join(f'"{k}":{v}' for k, v in parts.items()) + "}"


def _script(text: str) -> str:
    return text.replace("</script", "<\\/script")


def three_sources() -> list:
    """The text of three.js and its OrbitControls, from Debian's libjs-three."""
    out = []
    for rel in THREE_JS:
        path = os.path.join(THREE_DIR, rel)
        try:
            with open(path, encoding="utf-8") as f:
                out.append(f.read())
        except OSError as exc:
            raise AnimateError(f"cannot read {path} ({exc.strerror}): install Debian's libjs-three "
                               "(tools/install-deps)") from None
    return out


def render_html(sc, max_frames: int = MAX_FRAMES) -> str:
    """The page of a scene, as text."""
    three, orbit = three_sources()
    data = page_data(sc, max_frames).replace("</", "<\\/")
    title = html.escape(sc.title or os.path.basename(sc.path))
    parts = {"TITLE": title, "THREE": _script(three), "ORBIT": _script(orbit), "DATA": data, "VIEWER": VIEWER_JS}
    return re.sub(r"@(TITLE|THREE|ORBIT|DATA|VIEWER)@", lambda m: parts[m.group(1)], PAGE)  # one pass


def write_html(result_path, out_path, point=None) -> str:
    """Write the animation page of ``result_path`` (sweep point ``point`` of a sweep's file) to ``out_path``."""
    _check_output(out_path, (".html", ".htm"))
    with tempfile.TemporaryDirectory(prefix="rollsim-animate-") as work:
        sc = _scene(result_path, point, work)
        text = render_html(sc)
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out_path)
    return out_path


# --------------------------------------------------------------------------
# the video


def video_frame_times(sc, fps: float, speed: float) -> np.ndarray:
    """The simulated times of the video's frames: duration x fps / speed frames (at least one), frame k at
    t0 + k speed / fps."""
    duration = float(sc.time[-1] - sc.time[0])
    n = max(1, int(round(duration * fps / speed)))
    return sc.time[0] + np.arange(n) * (speed / fps)


def write_video(result_path, out_path, fps: float = DEFAULT_FPS, speed: float = DEFAULT_SPEED, point=None,
                dpi: int = 100, verbose: bool = False) -> str:
    """Write a video of ``result_path``: .mp4 (ffmpeg, H.264) or .gif (Pillow), ``fps`` frames per second of
    video, ``speed`` seconds of simulated time per second of video.  Returns ``out_path``."""
    _check_output(out_path, VIDEO_SUFFIXES)
    if not (fps > 0 and speed > 0):
        raise AnimateError(f"--fps and --speed must be positive (got {fps:g}, {speed:g})")
    from matplotlib import animation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    ext = os.path.splitext(out_path)[1].lower()
    if ext == ".mp4":
        if not animation.FFMpegWriter.isAvailable():
            raise AnimateError("no ffmpeg for an MP4: install Debian's ffmpeg (tools/install-deps), or write a .gif")
        writer = animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])
    else:
        writer = animation.PillowWriter(fps=fps)
    with tempfile.TemporaryDirectory(prefix="rollsim-animate-") as work:
        sc = _scene(result_path, point, work)
        times = video_frame_times(sc, fps, speed)
        summary = (f"{len(times)} frames at {fps:g} fps, {speed:g}x real time: {times[-1] - times[0] + speed / fps:g} s"
                   f" of simulated time in {len(times) / fps:g} s of video")
        if verbose:
            print(f"animate: {out_path}: {summary}")
        fig = Figure(figsize=(6.4, 4.8), layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        view = scene_mod.View(sc.dimension)
        tmp = os.path.join(os.path.dirname(os.path.abspath(out_path)),
                           "." + os.path.basename(out_path) + ".partial" + ext)
        progress = verbose and sys.stderr.isatty()
        try:
            with writer.saving(fig, tmp, dpi):
                for k, t in enumerate(times):
                    ax.clear()
                    _video_axes(ax, sc, view)
                    scene_mod.draw(ax, sc, float(t), view)
                    mode = sc.mode_name(sc.mode_at(float(t)))
                    ax.text(0.01, 0.99, f"t = {t:.3f} s" + (f"   {mode}" if mode else ""), transform=ax.transAxes,
                            va="top", ha="left", fontsize=9, family="monospace")
                    ax.text(0.99, 0.01, f"{fps:g} fps, {speed:g}x real time", transform=ax.transAxes, va="bottom",
                            ha="right", fontsize=8, color="0.3")
                    writer.grab_frame()
                    if progress:
                        print(f"\ranimate: frame {k + 1}/{len(times)}", end="", file=sys.stderr, flush=True)
            if progress:
                print(file=sys.stderr)
            os.replace(tmp, out_path)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
    return out_path


def _video_axes(ax, sc, view):
    ax.set_title(sc.title or os.path.basename(sc.path), fontsize=10)
    scene_mod.set_limits(ax, sc, view)
    if sc.dimension == 2:
        ax.set_xlabel(f"x [{sc.length_unit}]")
        ax.set_ylabel(f"y [{sc.length_unit}]")
        ax.grid(True, alpha=0.25)
    else:
        ax.set_axis_off()


# --------------------------------------------------------------------------
# the command line


def main(argv=None) -> int:
    """tools/animate RESULT.h5 [-o OUT.html|OUT.mp4|OUT.gif]... [--fps N] [--speed X] [--point N]

    Writes the animation page (OUT.html) and/or a video (OUT.mp4, OUT.gif) of a run's /scene; -o may be given
    several times (OUT without a suffix: OUT.html); without -o, RESULT.html next to the input.  --fps: the video's frames per second (default
    25); --speed: seconds of simulated time per second of video (default 1, real time).  --point N: point N of
    a sweep's file, run again with the program ($ROLLSIM_BINARY, else build/rollsim).  Exit status 2 for bad
    input (no such file, no /scene, a point out of range, an output folder that does not exist, an unknown
    suffix); nothing is written then.
    """
    ap = argparse.ArgumentParser(prog="animate", description="Animate a rollsim result file (its /scene).")
    ap.add_argument("file", help="rollsim result file (.h5), or a sweep's file with --point")
    ap.add_argument("-o", "--output", action="append", metavar="OUT",
                    help="OUT.html (the page; OUT without a suffix too), OUT.mp4 or OUT.gif (a video); may be "
                         "repeated (default: FILE.html)")
    ap.add_argument("--fps", type=float, default=DEFAULT_FPS, help=f"video frames per second (default {DEFAULT_FPS})")
    ap.add_argument("--speed", type=float, default=DEFAULT_SPEED,
                    help="seconds of simulated time per second of video (default 1: real time)")
    ap.add_argument("--point", type=int, metavar="N", help="animate point N of a sweep's file (run again)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    args = ap.parse_args(argv)
    outs = [o if os.path.splitext(o)[1] else o + ".html" for o in args.output or [os.path.splitext(args.file)[0]]]
    try:
        for out in outs:  # every output checked before any work
            _check_output(out, (".html", ".htm") + VIDEO_SUFFIXES)
        if not (args.fps > 0 and args.speed > 0):
            raise AnimateError(f"--fps and --speed must be positive (got {args.fps:g}, {args.speed:g})")
        for out in outs:
            if os.path.splitext(out)[1].lower() in VIDEO_SUFFIXES:
                write_video(args.file, out, fps=args.fps, speed=args.speed, point=args.point,
                            verbose=not args.quiet)
            else:
                write_html(args.file, out, point=args.point)
                if not args.quiet:
                    print(f"animate: wrote {out}")
    except (AnimateError, h5.RollsimFileError) as exc:
        print(f"animate: error: {exc}", file=sys.stderr)
        return 2
    return 0


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { margin: 0; font: 14px/1.35 sans-serif; background: #fafafa; color: #222; }
#head { padding: 6px 12px; background: #2b3a4a; color: #fff; }
#head small { color: #c8d3de; }
#view { position: relative; width: 100%; height: calc(100vh - 150px); min-height: 240px; background: #fff; }
#view canvas { display: block; width: 100%; height: 100%; }
#bar { padding: 6px 12px; }
#controls { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; }
#timeline { position: relative; margin: 4px 0 0 0; }
#slider { width: 100%; margin: 0; }
#events { position: relative; height: 12px; margin: 0 8px; }
#events span { position: absolute; top: 0; width: 3px; height: 12px; margin-left: -1px; background: #c0392b;
  cursor: help; }
#readout { font-family: monospace; min-width: 15em; }
#mode { font-family: monospace; }
#note { color: #666; font-size: 12px; }
</style></head>
<body data-ready="0">
<div id="head"><b>@TITLE@</b> <small id="subtitle"></small></div>
<div id="view"></div>
<div id="bar">
 <div id="controls">
  <button id="play" type="button">Play</button>
  <label>speed <select id="speed">
   <option value="0.01">0.01&times;</option><option value="0.1">0.1&times;</option>
   <option value="0.25">0.25&times;</option><option value="0.5">0.5&times;</option>
   <option value="1" selected>1&times;</option><option value="2">2&times;</option>
   <option value="5">5&times;</option><option value="10">10&times;</option></select></label>
  <span id="readout"></span>
  <span id="mode"></span>
  <label><input type="checkbox" id="forces"> contact forces</label>
  <label><input type="checkbox" id="follow"> follow the bodies</label>
 </div>
 <div id="timeline"><div id="events"></div><input type="range" id="slider" step="any"></div>
 <div id="note"></div>
</div>
<script>@THREE@</script>
<script>@ORBIT@</script>
<script type="application/json" id="rollsim-data">@DATA@</script>
<script>@VIEWER@</script>
</body></html>
"""

VIEWER_JS = r"""
(function () {
"use strict";
const D = JSON.parse(document.getElementById("rollsim-data").textContent);
const flat = D.dimension === 2;
const times = D.times, nf = times.length, t0 = times[0], t1 = times[nf - 1];
const size = D.size, ext = D.extent;
const view = document.getElementById("view");
const renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
renderer.setPixelRatio(window.devicePixelRatio || 1);
renderer.setClearColor(0xffffff, 1);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
const followBox = document.getElementById("follow");
followBox.checked = D.follow;
if (!(D.span > 0)) { followBox.disabled = true; followBox.parentNode.title = "the scene has no bodies"; }
// the centre of the bodies' drawables at frame i blended with i + 1 by w (null when none is drawn there)
function bodyCentre(i, w) {
  const c = new THREE.Vector3();
  let n = 0;
  D.drawables.forEach(function (d) {
    if (d.role !== "body") { return; }
    const p = d.position ? at(d.position, d, i, w) : (d.points ? at(d.points, d, i, w)[0] : null);
    if (p && finite(p)) { c.add(new THREE.Vector3().fromArray(p)); n++; }
  });
  return n > 0 ? c.multiplyScalar(1 / n) : null;
}
// the view's size: the whole extent, or the bodies' own size when the view follows them
const viewSize = D.follow ? 1.5 * D.span : size;
const centre = (D.follow && bodyCentre(0, 0)) ||
  new THREE.Vector3((ext[0] + ext[1]) / 2, (ext[2] + ext[3]) / 2, (ext[4] + ext[5]) / 2);
let camera;
if (flat) {
  camera = new THREE.OrthographicCamera(-1, 1, 1, -1, -10 * size - 10, 10 * size + 10);
  camera.position.set(centre.x, centre.y, 5 * size);
  camera.up.set(0, 1, 0);
} else {
  camera = new THREE.PerspectiveCamera(35, 1, size / 1000, size * 100);
  camera.up.set(0, 0, 1);
  const az = -60 * Math.PI / 180, el = 25 * Math.PI / 180;
  const dist = 1.25 * viewSize / (2 * Math.tan(35 * Math.PI / 360));
  camera.position.set(centre.x + dist * Math.cos(el) * Math.cos(az), centre.y + dist * Math.cos(el) * Math.sin(az),
                      centre.z + dist * Math.sin(el));
  scene.add(new THREE.AmbientLight(0xffffff, 0.55));
  const sun = new THREE.DirectionalLight(0xffffff, 0.55);
  sun.position.set(1, -2, 3);
  scene.add(sun);
}
camera.lookAt(centre);
const controls = new THREE.OrbitControls(camera, renderer.domElement);
controls.target.copy(centre);
if (flat) { controls.enableRotate = false; controls.screenSpacePanning = true; }
controls.update();
controls.addEventListener("change", draw);

function material(colour, opts) {
  const o = Object.assign({color: new THREE.Color(colour), side: THREE.DoubleSide}, opts || {});
  if (flat) { o.depthTest = false; o.depthWrite = false; return new THREE.MeshBasicMaterial(o); }
  return new THREE.MeshLambertMaterial(o);
}
const black = flat ? 0x222222 : 0x111111;
function mesh(geometry, mat, order) { const m = new THREE.Mesh(geometry, mat); m.renderOrder = order; return m; }
function lineObject(colour, n, order) {
  const g = new THREE.BufferGeometry();
  g.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * n), 3));
  const m = new THREE.LineBasicMaterial({color: new THREE.Color(colour)});
  if (flat) { m.depthTest = false; }
  const l = new THREE.Line(g, m); l.renderOrder = order; l.frustumCulled = false; return l;
}
const dotRadius = 0.012 * size;
const Y = new THREE.Vector3(0, 1, 0), Z = new THREE.Vector3(0, 0, 1);

// the value of a series at frame i blended with frame i + 1 by w (static: its one row); null when not finite
function at(series, d, i, w) {
  if (d.static) { return series[0]; }
  const a = series[i];
  if (w === 0 || i + 1 >= nf) { return a; }
  const b = series[i + 1];
  const blend = (x, y) => Array.isArray(x) ? x.map((v, k) => blend(v, y[k])) :
    (x === null || y === null ? null : x + w * (y - x));
  return blend(a, b);
}
function finite(v) { return Array.isArray(v) ? v.every(finite) : v !== null && isFinite(v); }
function setPose(obj, p, r) {
  // Gram-Schmidt: a blend of two rotations made a rotation again
  const c0 = new THREE.Vector3(r[0], r[3], r[6]).normalize();
  let c1 = new THREE.Vector3(r[1], r[4], r[7]);
  c1.sub(c0.clone().multiplyScalar(c0.dot(c1))).normalize();
  const c2 = new THREE.Vector3().crossVectors(c0, c1);
  obj.matrix.set(c0.x, c1.x, c2.x, p[0], c0.y, c1.y, c2.y, p[1], c0.z, c1.z, c2.z, p[2], 0, 0, 0, 1);
  obj.matrixWorldNeedsUpdate = true;
}

const items = D.drawables.map(function (d, index) {
  const order = 10 * index;
  const it = {d: d, update: null};
  if (d.kind === "disk" || d.kind === "sphere" || d.kind === "box" || d.kind === "plane") {
    const g = new THREE.Group(); g.matrixAutoUpdate = false;
    if (d.kind === "disk") {
      const cyl = new THREE.CylinderGeometry(d.radius, d.radius, Math.max(d.thickness, 1e-6), 64);
      cyl.rotateX(Math.PI / 2);
      g.add(mesh(cyl, material(d.color), order));
      const mark = new THREE.BoxGeometry(d.radius, 0.06 * d.radius, Math.max(d.thickness, 1e-6) * 1.04);
      mark.translate(d.radius / 2, 0, 0);
      g.add(mesh(mark, material(black), order + 1));
    } else if (d.kind === "sphere") {
      g.add(mesh(new THREE.SphereGeometry(d.radius, 48, 24), material(d.color), order));
      const ring = new THREE.TorusGeometry(d.radius * 1.002, 0.03 * d.radius, 8, 64);
      ring.rotateX(Math.PI / 2);
      g.add(mesh(ring, material(black), order + 1));
      const pin = new THREE.SphereGeometry(0.12 * d.radius, 16, 8);
      pin.translate(d.radius, 0, 0);
      g.add(mesh(pin, material(black), order + 1));
    } else if (d.kind === "box") {
      const h = d.half_extents;
      const box = new THREE.BoxGeometry(2 * h[0], 2 * h[1], Math.max(2 * h[2], 1e-6));
      g.add(mesh(box, material(d.color), order));
      const edges = new THREE.LineSegments(new THREE.EdgesGeometry(box), new THREE.LineBasicMaterial({color: black}));
      edges.renderOrder = order + 1; g.add(edges);
    } else {
      g.add(mesh(new THREE.PlaneGeometry(2 * d.half_size[0], 2 * d.half_size[1]),
                 material(d.color, {transparent: true, opacity: 0.6}), order));
    }
    scene.add(g);
    it.update = function (i, w) {
      const p = at(d.position, d, i, w), r = at(d.rotation, d, i, w);
      g.visible = finite(p) && finite(r);
      if (g.visible) { setPose(g, p, r); }
    };
  } else if (d.kind === "line" && d.width > 0) {
    const k = d.points[0].length, segs = [];
    for (let s = 0; s + 1 < k; s++) {
      const m = mesh(new THREE.CylinderGeometry(d.width / 2, d.width / 2, 1, 16), material(d.color), order);
      scene.add(m); segs.push(m);
    }
    it.update = function (i, w) {
      const pts = at(d.points, d, i, w), ok = finite(pts);
      segs.forEach(function (m, s) {
        m.visible = ok;
        if (!ok) { return; }
        const a = new THREE.Vector3().fromArray(pts[s]), b = new THREE.Vector3().fromArray(pts[s + 1]);
        const len = a.distanceTo(b);
        m.position.copy(a).add(b).multiplyScalar(0.5);
        m.quaternion.setFromUnitVectors(Y, len > 0 ? b.clone().sub(a).normalize() : Y);
        m.scale.set(1, Math.max(len, 1e-9), 1);
      });
    };
  } else if (d.kind === "line" || d.kind === "trail") {
    const trail = d.kind === "trail";
    const l = lineObject(d.color, trail ? nf + 1 : d.points[0].length, order);
    scene.add(l);
    it.update = function (i, w) {
      const buf = l.geometry.attributes.position.array;
      let n = 0;
      if (trail) {
        const upto = d.static ? 0 : i;
        for (let j = 0; j <= upto; j++) { const q = d.points[j][0]; if (finite(q)) { buf.set(q, 3 * n); n++; } }
        const q = at(d.points, d, i, w)[0];
        if (finite(q)) { buf.set(q, 3 * n); n++; }
      } else {
        const pts = at(d.points, d, i, w);
        if (finite(pts)) { pts.forEach(function (q) { buf.set(q, 3 * n); n++; }); }
      }
      l.geometry.setDrawRange(0, n);
      l.geometry.attributes.position.needsUpdate = true;
      l.visible = n > 1;
    };
  } else if (d.kind === "polygon") {
    const k = d.points[0].length, g = new THREE.BufferGeometry(), idx = [];
    for (let s = 1; s + 1 < k; s++) { idx.push(0, s, s + 1); }
    g.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * k), 3));
    g.setIndex(idx);
    const m = mesh(g, material(d.color), order); m.frustumCulled = false; scene.add(m);
    it.update = function (i, w) {
      const pts = at(d.points, d, i, w);
      m.visible = finite(pts);
      if (m.visible) { pts.forEach(function (q, s) { g.attributes.position.array.set(q, 3 * s); });
        g.attributes.position.needsUpdate = true; g.computeVertexNormals(); }
    };
  } else {  // circle, point, contact
    let geometry;
    if (d.kind === "circle") { geometry = new THREE.CircleGeometry(d.radius, 64); }
    else { geometry = new THREE.SphereGeometry(d.radius > 0 ? d.radius : (d.kind === "contact" ? 1.2 : 1) * dotRadius,
                                              24, 12); }
    const m = mesh(geometry, material(d.color), order + (d.kind === "contact" ? 5 : 0));
    scene.add(m);
    let arrow = null;
    if (d.kind === "contact" && d.force) {
      arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, new THREE.Color(d.color).getHex());
      arrow.renderOrder = order + 6;
      arrow.traverse(function (o) { if (o.material) { o.material.depthTest = !flat; } o.renderOrder = order + 6; });
      scene.add(arrow);
    }
    it.update = function (i, w) {
      const q = at(d.points, d, i, w)[0];
      m.visible = finite(q);
      if (m.visible) { m.position.fromArray(q); }
      if (d.kind === "circle" && d.normal) {
        const n = at(d.normal, d, i, w);
        if (finite(n)) { m.quaternion.setFromUnitVectors(Z, new THREE.Vector3().fromArray(n).normalize()); }
      }
      if (arrow) {
        const f = at(d.force, d, i, w);
        const show = m.visible && finite(f) && forcesBox.checked && D.force_scale > 0;
        arrow.visible = show;
        if (show) {
          const v = new THREE.Vector3().fromArray(f), len = v.length() * D.force_scale;
          arrow.position.fromArray(q);
          if (len > 0) { arrow.setDirection(v.normalize()); arrow.setLength(len, 0.2 * len, 0.1 * len); }
          else { arrow.visible = false; }
        }
      }
    };
  }
  return it;
});

// the controls
const slider = document.getElementById("slider"), playButton = document.getElementById("play");
const speedBox = document.getElementById("speed"), forcesBox = document.getElementById("forces");
const readout = document.getElementById("readout"), modeBox = document.getElementById("mode");
slider.min = t0; slider.max = t1; slider.value = t0;
let t = t0, playing = false, last = null;
document.getElementById("subtitle").textContent = "model " + D.model + " \u2014 " + D.file;
const hasForces = D.drawables.some(function (d) { return d.kind === "contact" && d.force; });
if (!hasForces) { forcesBox.disabled = true; forcesBox.parentNode.title = "the file has no contact forces"; }
document.getElementById("note").textContent = "showing " + nf + " of the file's " + D.n_samples + " samples" +
  (nf < D.n_samples ? " (evenly spaced, and those either side of each event)" : "") + "; " +
  D.events.length + (D.events.length === 1 ? " event" : " events") + " (marks above the time bar)" + (flat ? "; 2-D view: drag to pan, wheel to zoom" :
  "; drag to orbit, right-drag to pan, wheel to zoom") +
  (hasForces ? "; force arrows: " + (D.force_scale > 0 ? (1 / D.force_scale).toPrecision(3) + " N per " + D.unit : "") : "");
const evBox = document.getElementById("events");
const byTime = new Map();
D.events.forEach(function (e) { const k = e[0].toPrecision(10); byTime.set(k, (byTime.get(k) || []).concat([e])); });
byTime.forEach(function (list) {
  const mark = document.createElement("span");
  mark.style.left = (100 * (list[0][0] - t0) / Math.max(t1 - t0, 1e-300)) + "%";
  mark.title = "t = " + list[0][0].toPrecision(8) + " s: " + list.map(function (e) { return e[1]; }).join(", ");
  mark.dataset.time = list[0][0];
  mark.addEventListener("click", function () { setTime(list[0][0]); });
  evBox.appendChild(mark);
});

function frameOf(time) {
  if (time <= t0) { return [0, 0]; }
  if (time >= t1) { return [nf - 1, 0]; }
  let lo = 0, hi = nf - 1;
  while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (times[mid] <= time) { lo = mid; } else { hi = mid; } }
  const dt = times[lo + 1] - times[lo];
  return [lo, dt > 0 ? (time - times[lo]) / dt : 0];
}
function resize() {
  const w = view.clientWidth, h = view.clientHeight;
  renderer.setSize(w, h, false);
  if (flat) {
    const sx = D.follow ? viewSize : (ext[1] - ext[0]) * 1.16 || size;
    const sy = D.follow ? viewSize : (ext[3] - ext[2]) * 1.16 || size;
    const half = Math.max(sx / 2, sy / 2 * w / h);
    camera.left = -half; camera.right = half; camera.top = half * h / w; camera.bottom = -half * h / w;
  } else { camera.aspect = w / h; }
  camera.updateProjectionMatrix();
  draw();
}
function setTime(time) { t = Math.min(Math.max(time, t0), t1); slider.value = t; draw(); }
function draw() {
  const f = frameOf(t), i = f[0], w = f[1];
  items.forEach(function (it) { it.update(i, w); });
  const c = followBox.checked ? bodyCentre(i, w) : null;
  if (c) {  // the camera moved with the bodies' centre, its direction and distance kept
    const shift = c.sub(controls.target);
    camera.position.add(shift); controls.target.add(shift); camera.updateMatrixWorld();
  }
  readout.textContent = "t = " + t.toFixed(4) + " s / " + t1.toFixed(4) + " s";
  if (D.mode) { const m = D.mode[i]; modeBox.textContent = "mode: " + (D.mode_names[m] || m); }
  renderer.render(scene, camera);
}
function tick() {
  // the page's clock when the callback runs, not the frame's timestamp (the browser's frame time, whose
  // differences can add up to more than the time between the clicks): the time played is at most that time
  const now = performance.now();
  if (playing) {
    if (last !== null) {
      t += (now - last) / 1000 * parseFloat(speedBox.value);
      if (t >= t1) { t = t1; playing = false; playButton.textContent = "Play"; }
      slider.value = t; draw();
    }
    last = now;
    requestAnimationFrame(tick);
  } else { last = null; }
}
playButton.addEventListener("click", function () {
  if (!playing && t >= t1) { t = t0; }
  playing = !playing; playButton.textContent = playing ? "Pause" : "Play";
  if (playing) { requestAnimationFrame(tick); }
});
slider.addEventListener("input", function () { t = parseFloat(slider.value); draw(); });
forcesBox.addEventListener("change", draw);
followBox.addEventListener("change", draw);
document.addEventListener("keydown", function (e) { if (e.key === " " && e.target === document.body) {
  e.preventDefault(); playButton.click(); } });
window.addEventListener("resize", resize);

// for tests and scripts: the camera, and a world point's place on the page (CSS pixels)
window.rollsimCamera = function () {
  camera.updateMatrixWorld();
  const r = renderer.domElement.getBoundingClientRect();
  return {projection: Array.from(camera.projectionMatrix.elements), view: Array.from(camera.matrixWorldInverse.elements),
          left: r.left + window.scrollX, top: r.top + window.scrollY, width: r.width, height: r.height,
          time: t, frame: frameOf(t)[0]};
};
window.rollsimProject = function (x, y, z) {
  const c = window.rollsimCamera(), v = new THREE.Vector3(x, y, z).project(camera);
  return [c.left + (v.x + 1) / 2 * c.width, c.top + (1 - v.y) / 2 * c.height];
};
resize();
document.body.dataset.ready = "1";
})();
"""
