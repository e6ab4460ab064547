"""Result files with a /scene group (format 1, docs/animate.md), written with h5py for the viewer tests.

``write_planar`` : a carriage on a rail with a pendulum (dimension 2): a box, a rod, a bob, a hinge, a trail;
``write_rolling``: a disk rolling on a circle on a floor and a sphere rolling along a line (dimension 3), with
                   the disk's contact point and force (NaN after a lift-off at 1.8 s).
The motions are given in closed form, so a test knows every drawable's place at every time.
"""

import h5py
import numpy as np

import synth

PLANAR_T = 2.0
ROLLING_T = 2.0


def carriage_x(t):
    return 0.3 * np.sin(2.0 * t)


def pendulum_angle(t):
    return 0.6 * np.cos(3.0 * t)


ROD_LENGTH = 0.5
BOB_RADIUS = 0.06


def bob_centre(t):
    """The bob's centre (x, y, 0) of the planar fixture at times ``t``."""
    phi = pendulum_angle(t)
    return np.stack([carriage_x(t) + ROD_LENGTH * np.sin(phi), -ROD_LENGTH * np.cos(phi), 0 * t], axis=-1)


def _rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _drawable(scene, index, name, kind, role, colour, static, **attrs):
    g = scene.create_group(f"{index:02d}_{name}")
    g.attrs["name"] = name
    g.attrs["kind"] = kind
    g.attrs["role"] = role
    g.attrs["color"] = colour
    g.attrs["static"] = np.int32(static)
    for k, v in attrs.items():
        g.attrs[k] = np.asarray(v, dtype=float) if not isinstance(v, str) else v
    return g


def _file(path, model, title, t, modes, mode_names, events):
    f = h5py.File(path, "w", track_order=True)
    synth._root(f, model, title)
    f.create_group("scenario").attrs["toml"] = f'model = "{model}"\n'
    f["scenario"].attrs["resolved"] = f'model = "{model}"\n'
    tr = f.create_group("trajectory", track_order=True)
    synth._signal(tr, "time", t, "s", "time").attrs["role"] = "time"
    m = synth._signal(tr, "mode", modes, "1", "mode", dtype=np.int8)
    m.attrs["role"] = "mode"
    for k, name in mode_names.items():
        m.attrs[f"mode_name_{k}"] = name
    ev = f.create_group("events", track_order=True)
    synth._signal(ev, "time", [e[0] for e in events], "s", "time")
    ev.create_dataset("kind", data=[e[1] for e in events], dtype=synth.STR)
    f.create_group("summary").attrs["termination"] = "t_end"
    return f


def _scene(f, dimension, bounds):
    sc = f.create_group("scene", track_order=True)
    sc.attrs["format"] = np.int32(1)
    sc.attrs["dimension"] = np.int32(dimension)
    sc.attrs["length_unit"] = "m"
    lo, hi = np.min(bounds, axis=0), np.max(bounds, axis=0)
    sc.attrs["extent"] = np.array([lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]])
    return sc


def write_planar(path, n=201):
    t = np.linspace(0.0, PLANAR_T, n)
    x = carriage_x(t)
    bob = bob_centre(t)
    hinge = np.stack([x, 0 * t, 0 * t], axis=-1)
    modes = np.where(np.sin(3.0 * t) >= 0, 0, 1)
    events = [(float(tc), "reversal") for tc in (np.pi / 3, 2 * np.pi / 3)]
    f = _file(path, "carriage_pendulum", "Carriage and pendulum (fixture)", t, modes,
              {0: "swinging left", 1: "swinging right"}, events)
    rail = np.array([[[-0.6, -0.05, 0.0], [0.6, -0.05, 0.0]]])
    box_half = [0.12, 0.05, 0.0]
    bounds = np.vstack([rail[0], hinge + [0.12, 0.05, 0], hinge - [0.12, 0.05, 0], bob + BOB_RADIUS,
                        bob - BOB_RADIUS])
    bounds[:, 2] = 0.0
    sc = _scene(f, 2, bounds)
    g = _drawable(sc, 0, "rail", "line", "ground", "#7f7f7f", 1, width=0.01)
    g.create_dataset("points", data=rail)
    g = _drawable(sc, 1, "carriage", "box", "body", "#1f77b4", 0, half_extents=box_half)
    g.create_dataset("position", data=hinge)
    g.create_dataset("rotation", data=np.tile(np.eye(3).ravel(), (n, 1)))
    g = _drawable(sc, 2, "rod", "line", "body", "#8c564b", 0, width=0.012)
    g.create_dataset("points", data=np.stack([hinge, bob], axis=1))
    g = _drawable(sc, 3, "bob", "circle", "body", "#d62728", 0, radius=BOB_RADIUS)
    g.create_dataset("points", data=bob[:, None, :])
    g = _drawable(sc, 4, "bob_path", "trail", "draw", "#ff7f0e", 0)
    g.create_dataset("points", data=bob[:, None, :])
    g = _drawable(sc, 5, "hinge", "point", "body", "#000000", 0, radius=0.015)
    g.create_dataset("points", data=hinge[:, None, :])
    f.close()
    return path


DISK_RADIUS, DISK_THICKNESS, PATH_RADIUS, LEAN = 0.15, 0.03, 0.5, 0.25
SPHERE_RADIUS = 0.1
LIFT_OFF = 1.8


def disk_pose(t):
    """(centre, rotation) of the rolling fixture's disk at time t (a scalar)."""
    psi, phi = 1.2 * t, -1.2 * t * PATH_RADIUS / DISK_RADIUS
    upright = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])  # local z (the axis) along world -y
    R = _rot_z(psi) @ _rot_x(LEAN) @ upright @ _rot_z(phi)
    contact = PATH_RADIUS * np.array([np.sin(psi), -np.cos(psi), 0.0])  # the disk's axis points out from the origin
    n = R[:, 2]
    up = np.array([0.0, 0.0, 1.0]) - n[2] * n
    return contact + DISK_RADIUS * up / np.linalg.norm(up), R, contact


def sphere_centre(t):
    return np.stack([-0.4 + 0.3 * t, 0.0 * t + 0.05, SPHERE_RADIUS + 0 * t], axis=-1)


def write_rolling(path, n=161):
    t = np.linspace(0.0, ROLLING_T, n)
    poses = [disk_pose(s) for s in t]
    centre = np.array([p[0] for p in poses])
    rot = np.array([p[1].ravel() for p in poses])
    contact = np.array([p[2] for p in poses])
    force = np.stack([-0.5 * np.sin(1.2 * t), 0.5 * np.cos(1.2 * t), 9.81 + 0 * t], axis=-1)
    lifted = t > LIFT_OFF
    contact_shown = contact.copy()
    contact_shown[lifted] = np.nan
    force[lifted] = np.nan
    sph = sphere_centre(t)
    sph_rot = np.array([_rot_y(0.3 * s / SPHERE_RADIUS).ravel() for s in t])
    events = [(LIFT_OFF, "lift_off")]
    f = _file(path, "rolling_disk_fixture", "Rolling disk and sphere (fixture)", t,
              np.where(lifted, 1, 0), {0: "rolling", 1: "free flight"}, events)
    floor_half = [0.9, 0.9]
    bounds = np.vstack([centre + DISK_RADIUS, centre - DISK_RADIUS, sph + SPHERE_RADIUS, sph - SPHERE_RADIUS,
                        [[-0.9, -0.9, 0.0], [0.9, 0.9, 0.0]]])
    sc = _scene(f, 3, bounds)
    g = _drawable(sc, 0, "floor", "plane", "ground", "#c7c7c7", 1, half_size=floor_half)
    g.create_dataset("position", data=[[0.0, 0.0, 0.0]])
    g.create_dataset("rotation", data=[np.eye(3).ravel()])
    g = _drawable(sc, 1, "disk", "disk", "body", "#d62728", 0, radius=DISK_RADIUS, thickness=DISK_THICKNESS)
    g.create_dataset("position", data=centre)
    g.create_dataset("rotation", data=rot)
    g = _drawable(sc, 2, "ball", "sphere", "body", "#1f77b4", 0, radius=SPHERE_RADIUS)
    g.create_dataset("position", data=sph)
    g.create_dataset("rotation", data=sph_rot)
    g = _drawable(sc, 3, "disk_contact", "contact", "contact", "#2ca02c", 0, contact="floor")
    g.create_dataset("points", data=contact_shown[:, None, :])
    g.create_dataset("force", data=force)
    g = _drawable(sc, 4, "contact_path", "trail", "draw", "#ff7f0e", 0)
    g.create_dataset("points", data=contact[:, None, :])
    f.close()
    return path
