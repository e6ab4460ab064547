"""Synthetic rollsim result files in the documented HDF5 layout, for the tool tests.

Each ``write_*`` function writes one file with h5py and returns the path.  The
values are chosen so that orientation and decoding mistakes show: non-symmetric
matrices, non-ASCII text, fixed-length and variable-length strings.
"""

import os
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(REPO, "tools")
PACKAGE = os.path.join(TOOLS, "python")  # the rollsim package, used from the source tree
if PACKAGE not in sys.path:
    sys.path.insert(0, PACKAGE)

STR = h5py.string_dtype("utf-8")
BINARY = os.environ.get("ROLLSIM_BINARY", os.path.join(REPO, "build", "rollsim"))


def rollsim(*args, check=True):
    """Run the built program (ROLLSIM_BINARY, set by ctest; else build/rollsim) and return the process."""
    p = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"rollsim {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p

TABLE_TOML = """title = "Tipping table, µ = 0.3"
model = "tipping_table"

[table]
mu = 0.3
half_width = 0.5
"""


def _root(f, model, title, completed=1, status="ok"):
    f.attrs["format"] = "rollsim"
    f.attrs["format_version"] = np.int32(1)
    f.attrs["software_version"] = "0.1.0"
    # A fixed-length ASCII string, as a C writer may produce.
    f.attrs["git_hash"] = np.bytes_("0123456789ab")
    f.attrs["command_line"] = "rollsim run scenario.toml -o out.h5"
    f.attrs["created_utc"] = "2024-01-02T03:04:05Z"
    f.attrs["completed"] = np.int32(completed)
    f.attrs["status"] = status
    f.attrs["model"] = model
    f.attrs["title"] = title


def _signal(g, name, data, unit, description, dtype=np.float64):
    ds = g.create_dataset(name, data=np.asarray(data, dtype=dtype))
    ds.attrs["unit"] = unit
    ds.attrs["description"] = description
    return ds


def _roles(g, roles):
    """The signal roles as the program writes them (docs/python.md, "Signal roles"): name -> role, or
    (role, ledger sign or None, contact or None)."""
    for name, spec in roles.items():
        if name not in g:
            continue
        role, sign, contact = (spec, None, None) if isinstance(spec, str) else spec
        g[name].attrs["role"] = role
        if sign:
            g[name].attrs["ledger"] = np.int64(sign)
        if contact:
            g[name].attrs["contact"] = contact


TABLE_ROLES = dict(time="time", theta1="state", theta2="state", omega1="rate", omega2="rate",
                   contact_position="output", normal_force=("contact.normal_force", None, "table"),
                   tangential_force=("contact.tangential_force", None, "table"), kinetic_energy="energy.kinetic",
                   potential_energy="energy.potential", total_energy=("energy.total", 1, None),
                   input_work=("work.input", -1, None))
DISK_ROLES = dict(time="time", x="state", y="rate", z="rate", mode="mode", kinetic_energy="energy.kinetic",
                  potential_energy="energy.potential", total_energy=("energy.total", 1, None),
                  dissipated_energy=("dissipation", 1, None),
                  friction_force=("contact.tangential_force", None, "ground"), friction_utilization="output",
                  u="output", v="output", w=("contact.slip_velocity", None, "ground"))


def _scenario(f, toml, resolved):
    s = f.create_group("scenario")
    s.attrs["toml"] = toml
    s.attrs["resolved"] = resolved


def _solver(f):
    s = f.create_group("solver")
    s.attrs["method"] = "CVODE BDF"
    s.attrs["rtol"] = 1e-10
    s.attrs["atol"] = 1e-12
    s.attrs["n_steps"] = np.int64(1234)
    s.attrs["n_rhs_evals"] = np.int64(2345)
    s.attrs["n_jac_evals"] = np.int64(34)
    s.attrs["n_root_evals"] = np.int64(456)


def table_data(n=400):
    t = np.linspace(0.0, 2.0, n)
    th1 = 0.1 * np.sin(3.0 * t) + 0.02 * t
    th2 = 0.05 * np.cos(2.0 * t)
    om1 = np.gradient(th1, t)
    om2 = np.gradient(th2, t)
    xc = 0.5 * np.tanh(t - 1.0)
    N = 9.81 * (1.0 + 0.2 * np.sin(5 * t))
    N[-20:] = 0.0  # lift-off at the end: demand is undefined there
    T = 0.25 * N * np.sin(4 * t)
    ke = 0.5 * (om1**2 + om2**2)
    pe = 9.81 * (th1 + th2)
    tot = ke + pe
    tot = tot[0] + 1e-9 * t  # a small linear drift
    return dict(time=t, theta1=th1, theta2=th2, omega1=om1, omega2=om2, contact_position=xc,
                normal_force=N, tangential_force=T, kinetic_energy=ke, potential_energy=tot - ke,
                total_energy=tot)


TABLE_UNITS = dict(time="s", theta1="rad", theta2="rad", omega1="rad/s", omega2="rad/s",
                   contact_position="m", normal_force="N", tangential_force="N",
                   kinetic_energy="J", potential_energy="J", total_energy="J", input_work="J")


def write_table(path, completed=1, status="ok", torque=None):
    """A table run; with ``torque`` the total energy also gains the torque's work tau (theta1 - theta1(0)),
    so that T + V - tau (theta1 - theta1(0)) drifts by exactly 1e-9 t (the plain file's drift)."""
    d = table_data()
    resolved = "model = tipping_table\ntable.mu = 0.3\ntable.half_width = 0.5\nt_end = 2\n"
    if torque is not None:
        work = torque * (d["theta1"] - d["theta1"][0])
        d["total_energy"] = d["total_energy"] + work
        d["potential_energy"] = d["total_energy"] - d["kinetic_energy"]
        d["input_work"] = work
        resolved += f"parameters.table_torque = {torque!r}\n"
    with h5py.File(path, "w") as f:
        _root(f, "tipping_table", "Tipping table, µ = 0.3", completed, status)
        _scenario(f, TABLE_TOML, resolved)
        g = f.create_group("trajectory")
        for k, v in d.items():
            _signal(g, k, v, TABLE_UNITS[k], f"the {k} signal")
        _roles(g, TABLE_ROLES)
        e = f.create_group("events")
        e.create_dataset("time", data=np.array([0.7, 1.9]))
        e.create_dataset("kind", data=np.array(["slip_onset", "table_edge"], dtype=object), dtype=STR)
        e.create_dataset("mode_before", data=np.array([0, 1], dtype=np.int32))
        e.create_dataset("mode_after", data=np.array([1, 2], dtype=np.int32))
        for k in ("theta1", "theta2", "omega1", "omega2"):
            e.create_dataset(k, data=np.interp([0.7, 1.9], d["time"], d[k]))
        s = f.create_group("summary")
        s.attrs["termination"] = "table_edge"
        s.attrs["t_final"] = 1.9
        s.attrs["energy_drift_abs"] = 1.9e-9
        s.attrs["energy_drift_rel"] = 1.9e-9 / abs(d["total_energy"][0])
        s.attrs["t_edge"] = 1.9
        _solver(f)
    return path


def disk_data(n=600):
    t = np.linspace(0.0, 6.0, n)
    x = 1.5 * np.cos(t) * np.exp(-0.1 * t)
    y = np.sin(t) * np.exp(-0.1 * t)
    z = 0.3 * np.sin(2 * t)
    z[(t > 2) & (t < 3)] = 0.0
    mode = np.where(t < 2, 1, np.where(t < 3, 0, -1)).astype(np.int8)
    ke = 0.5 * (x**2 + y**2)
    pe = 0.1 * z**2
    diss = 0.05 * t
    tot = 1.2 - diss
    return dict(time=t, x=x, y=y, z=z, mode=mode, kinetic_energy=ke, potential_energy=tot - ke,
                total_energy=tot, dissipated_energy=diss, friction_force=0.3 * np.sign(np.sin(t)),
                friction_utilization=np.clip(np.abs(np.sin(t)), 0, 1))


def write_disk(path, physical=True):
    d = disk_data()
    if physical:
        d.update(u=d["x"] * 0.01, v=d["y"] * 0.01, w=d["z"] * 0.02)
    units = dict(time="s", x="1", y="1", z="1", mode="1", kinetic_energy="J", potential_energy="J",
                 total_energy="J", dissipated_energy="J", friction_force="N",
                 friction_utilization="1", u="m", v="m/s", w="m/s")
    with h5py.File(path, "w") as f:
        _root(f, "rolling_disk", "Rolling disk ∑ test")
        _scenario(f, 'model = "rolling_disk"\n', "model = rolling_disk\ninitial.x = 1.5\n")
        g = f.create_group("trajectory")
        for k, v in d.items():
            _signal(g, k, v, units[k], f"disk {k}", dtype=v.dtype)
        _roles(g, DISK_ROLES)
        e = f.create_group("events")
        e.create_dataset("time", data=np.array([2.0, 3.0, 4.5]))
        e.create_dataset("kind", data=np.array(["stick", "slip", "reversal"], dtype=object), dtype=STR)
        e.create_dataset("mode_before", data=np.array([1, 0, -1], dtype=np.int32))
        e.create_dataset("mode_after", data=np.array([0, -1, 1], dtype=np.int32))
        for k in ("x", "y", "z"):
            e.create_dataset(k, data=np.interp([2.0, 3.0, 4.5], d["time"], d[k]))
        s = f.create_group("summary")
        s.attrs["termination"] = "t_end"
        s.attrs["t_final"] = 6.0
        s.attrs["energy_drift_abs"] = 0.0
        s.attrs["energy_drift_rel"] = 0.0
        s.attrs["symbols"] = "+0-+"
        s.attrs["classification"] = "A"
        s.attrs["rolling_radius"] = 0.42
        s.attrs["n_stick"] = np.int64(1)
        s.attrs["n_slip"] = np.int64(1)
        s.attrs["n_reversal"] = np.int64(1)
        _solver(f)
    return path


LINEAR_A = np.array([[0.0, 1.0, 0.0],
                     [-4.0, -0.4, 2.0],
                     [0.5, 0.0, -3.0]])
LINEAR_B = np.array([[0.0], [1.0], [0.0]])
LINEAR_C = np.array([[1.0, 0.0, 0.5]])
LINEAR_D = np.array([[0.0]])


def linear_data():
    lam, vec = np.linalg.eig(LINEAR_A)
    f = np.logspace(-2, 1, 200)
    s = 2j * np.pi * f
    H = np.array([(LINEAR_C @ np.linalg.solve(si * np.eye(3) - LINEAR_A, LINEAR_B) + LINEAR_D)[0, 0] for si in s])
    wn = np.abs(lam)
    zeta = -lam.real / wn
    return dict(eigenvalues_real=lam.real, eigenvalues_imag=lam.imag,
                eigenvectors_real=vec.real, eigenvectors_imag=vec.imag,
                frequency_hz=np.abs(lam.imag) / (2 * np.pi), damping_ratio=zeta,
                time_constant=-1.0 / lam.real, wavelength=np.where(lam.imag != 0, 2 * np.pi / np.abs(lam.imag + 1e-300), np.inf),
                A=LINEAR_A, B=LINEAR_B, C=LINEAR_C, D=LINEAR_D,
                fr_f=f, fr_mag=20 * np.log10(np.abs(H)), fr_phase=np.degrees(np.unwrap(np.angle(H))))


def write_linear(path):
    d = linear_data()
    with h5py.File(path, "w") as f:
        _root(f, "tipping_table", "Linearization about rest")
        _scenario(f, TABLE_TOML, "model = tipping_table\n")
        g = f.create_group("linear")
        g.attrs["inputs"] = "force"
        g.attrs["outputs"] = "theta1"
        units = dict(eigenvalues_real="1/s", eigenvalues_imag="1/s", eigenvectors_real="1", eigenvectors_imag="1",
                     frequency_hz="Hz", damping_ratio="1", time_constant="s", wavelength="m",
                     A="", B="", C="", D="")
        for k in units:
            g.create_dataset(k, data=d[k]).attrs["unit"] = units[k]
        # The classes as the run stores them: the synthetic roots are all damped.
        g.create_dataset("stability", data=np.array(["damped"] * 3, dtype=object), dtype=STR)
        fr = g.create_group("frequency_response")
        fr.create_dataset("frequency_hz", data=d["fr_f"]).attrs["unit"] = "Hz"
        fr.create_dataset("magnitude_db", data=d["fr_mag"]).attrs["unit"] = "dB"
        fr.create_dataset("phase_deg", data=d["fr_phase"]).attrs["unit"] = "deg"
        _solver(f)
    return path


def sweep_data(basin=True):
    xs = np.linspace(-2.0, 2.0, 9)
    ys = np.array([0.1, 0.2, 0.4, 0.8])
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    X, Y = X.ravel(), Y.ravel()
    cls = np.where(X * Y > 0.1, "A", np.where(X * Y < -0.1, "B", "undetermined"))
    status = np.where(cls == "undetermined", "failed", "ok")
    return dict(X=X, Y=Y, cls=cls, status=status)


def write_sweep(path, basin=True):
    d = sweep_data()
    n = d["X"].size
    with h5py.File(path, "w", track_order=True) as f:
        model = "rolling_disk" if basin else "tipping_table"
        _root(f, model, "Basin sweep" if basin else "Edge-time study")
        _scenario(f, "[sweep]\n", "sweep.keys = initial.x, initial.y\n")
        g = f.create_group("sweep", track_order=True)
        k1, k2 = ("initial.x", "initial.y") if basin else ("table.mu", "initial.theta1")
        g.create_dataset(k1, data=d["X"]).attrs["unit"] = "1" if basin else ""
        g.create_dataset(k2, data=d["Y"]).attrs["unit"] = "1" if basin else "rad"
        g.create_dataset("status", data=d["status"].astype(object), dtype=STR)
        g.create_dataset("termination", data=np.array(["t_end"] * n, dtype=object), dtype=STR)
        g.create_dataset("t_final", data=np.full(n, 10.0)).attrs["unit"] = "s"
        g.create_dataset("n_events", data=np.arange(n, dtype=np.int64))
        if basin:
            g.create_dataset("classification", data=d["cls"].astype(object), dtype=STR)
            g.create_dataset("symbols", data=np.array(["+0-"] * n, dtype=object), dtype=STR)
            g.create_dataset("rolling_radius", data=np.abs(d["X"]) + d["Y"]).attrs["unit"] = "1"
            g.create_dataset("dissipated_energy", data=0.1 * d["Y"]).attrs["unit"] = "J"
            for k in ("x", "y", "z"):
                g.create_dataset(k, data=np.zeros(n)).attrs["unit"] = "1"
        else:
            t_edge = 1.0 / (d["X"] ** 2 + 0.5) + d["Y"]
            g.create_dataset("t_edge", data=t_edge).attrs["unit"] = "s"
            g.create_dataset("energy_drift", data=1e-10 * d["X"]).attrs["unit"] = "J"
            for k in ("theta1", "theta2", "omega1", "omega2"):
                g.create_dataset(k, data=np.zeros(n)).attrs["unit"] = "rad" if k.startswith("theta") else "rad/s"
    return path


POINTS_TOML = """model = "tipping_table"
[sweep]
"initial.theta1" = { from = 0.001, to = 0.1, n = 3, spacing = "log" }
parameters = { table_torque = [0.0, 0.5] }
"""


def write_sweep_points(path):
    """A 3 x 2 grid sweep (log-spaced initial.theta1, linear table_torque) with /points trajectories; each
    point's theta1(t) = theta1(0) (1 + t), and points 1 and 4 carry events at t = 0.5 and 0.25, 0.75."""
    th = np.array([0.001, 0.01, 0.1])
    tq = np.array([0.0, 0.5])
    TH, TQ = np.meshgrid(th, tq, indexing="ij")  # the last key varies fastest
    TH, TQ = TH.ravel(), TQ.ravel()
    n = TH.size
    events = {1: [0.5], 4: [0.25, 0.75]}
    with h5py.File(path, "w", track_order=True) as f:
        _root(f, "tipping_table", "Points sweep")
        _scenario(f, POINTS_TOML, "model = tipping_table\nparameters.table_torque = 0\n")
        g = f.create_group("sweep", track_order=True)
        g.attrs["swept_keys"] = "initial.theta1,parameters.table_torque"
        g.create_dataset("initial.theta1", data=TH).attrs["unit"] = "rad"
        g.create_dataset("parameters.table_torque", data=TQ).attrs["unit"] = "N m"
        g.create_dataset("status", data=np.array(["ok"] * n, dtype=object), dtype=STR)
        g.create_dataset("t_final", data=np.ones(n)).attrs["unit"] = "s"
        g.create_dataset("n_events", data=np.array([len(events.get(i, [])) for i in range(n)], dtype=np.int64))
        pts = f.create_group("points")
        t = np.linspace(0.0, 1.0, 11)
        for i in range(n):
            p = pts.create_group(f"{i:06d}")
            p.attrs["index"] = np.int64(i)
            p.attrs["status"] = "ok"
            p.attrs["overrides"] = f"initial.theta1={TH[i]!r} parameters.table_torque={TQ[i]!r}"
            tr = p.create_group("trajectory")
            _signal(tr, "time", t, "s", "time")
            _signal(tr, "theta1", TH[i] * (1 + t), "rad", "table angle")
            if i in events:
                e = p.create_group("events")
                e.create_dataset("time", data=np.array(events[i]))
                e.create_dataset("kind", data=np.array(["lift_off"] * len(events[i]), dtype=object), dtype=STR)
                e.create_dataset("theta1", data=TH[i] * (1 + np.array(events[i])))
    return path


def write_growth(path):
    with h5py.File(path, "w") as f:
        _root(f, "rolling_disk", "Growth check")
        g = f.create_group("growth")
        modes = ["slip", "slip", "slip", "stick", "stick", "stick"]
        eps = np.array([1e-3, 1e-4, 1e-5, 1e-3, 1e-4, 1e-5])
        pred = eps * 2.0
        meas = pred * (1 + np.array([1e-2, 1e-3, 1e-4, 2e-2, 2e-3, 2e-4]))
        g.create_dataset("mode", data=np.array(modes, dtype=object), dtype=STR)
        g.create_dataset("epsilon", data=eps)
        g.create_dataset("predicted", data=pred)
        g.create_dataset("measured", data=meas)
        g.create_dataset("rel_error", data=np.abs(meas - pred) / pred)
    return path


def write_incomplete(path):
    return write_table(path, completed=0, status="running: t = 0.73")


def write_all(directory):
    return {
        "table": write_table(os.path.join(directory, "table.h5")),
        "disk": write_disk(os.path.join(directory, "disk.h5")),
        "linear": write_linear(os.path.join(directory, "linear.h5")),
        "sweep_basin": write_sweep(os.path.join(directory, "sweep_basin.h5"), basin=True),
        "sweep_study": write_sweep(os.path.join(directory, "sweep_study.h5"), basin=False),
        "growth": write_growth(os.path.join(directory, "growth.h5")),
        "incomplete": write_incomplete(os.path.join(directory, "incomplete.h5")),
    }


def load_tool(name, path):
    """A tool of tools/ (a Python script without the .py suffix) imported as the module `name`."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
