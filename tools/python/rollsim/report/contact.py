"""Runs of the contact engine (a user model with a [contacts.NAME] gap): phases, impacts and the energy ledger."""

from __future__ import annotations

import html
import os

import numpy as np

from .. import contacts, plot
from .animation import animation_link
from .impacts import add_ball_closed_form, add_rimless_closed_form
from .energy import ENERGY_DRIFT_FACTOR
from .model import Check, Run, Runner, Section, failed_run_check, load_result
from .page import count, fmt, png, table_html

LEDGER_ROUNDING = 1e-12      # sums of the file's own numbers agree to this, relative to max |h|
TABLE_DIGITS = 10            # significant digits of the printed numbers
MAX_PHASE_ROWS = 400         # longer phase tables are cut (the count says so)
# Scenarios whose runs the report also checks against a closed form (by file name).
CLOSED_FORMS = {"bouncing_ball.toml": add_ball_closed_form, "rimless_wheel.toml": add_rimless_closed_form}


def is_contact_scenario(doc: dict) -> bool:
    """A user model with at least one contact that has a gap (the contact engine)."""
    cs = doc.get("contacts", {})
    return doc.get("model") == "lagrangian" and isinstance(cs, dict) and any(
        isinstance(c, dict) and "gap" in c for c in cs.values())


def plan_contact(runner: Runner, scen: str, name: str):
    run = runner.prepare(f"run {name}", ["run", scen, "-q"], os.path.join(runner.workdir, f"{name}.h5"))

    def build():
        sec = contact_section(run, name)
        r = load_result(run)
        if r is not None and run.returncode == 0 and os.path.basename(scen) in CLOSED_FORMS:
            CLOSED_FORMS[os.path.basename(scen)](sec, r)
        sec.animation = animation_link(runner.animations, run.output, name)
        return [sec]

    return build


def _mode_change(p: contacts.Phase, n: str) -> tuple:
    return p.before[n], p.after[n]


def contact_section(run: Run, name: str) -> Section:
    r = load_result(run)
    title = r.title if r is not None and r.title else name
    sec = Section(f"contact-{name}", f"Contacts: {html.escape(title)}",
                  "A run of the contact engine. Every event in time order with the modes of the contacts it "
                  "concerns (o open, 0 stick or closed, + and − sliding); the impacts with their impulses and "
                  "kinetic energy losses; where the energy went: lost at impacts, in slip (friction), and the "
                  "drift of the balance h + losses − initial. Every number is read from the result file and "
                  "checked against the file's other records.")
    if r is None or run.returncode != 0:
        sec.checks.append(failed_run_check(run))
        return sec
    s = r.summary
    sec.checks.append(Check("run completes", "exit 0, completed = 1",
                            f"{html.escape(str(s.get('termination', r.status)))} at t = {fmt(s.get('t_final'), 6)}",
                            bool(r.completed)))
    audit = str(s.get("audit", ""))
    if audit:
        sec.checks.append(Check("self-audit (rollsim's own verdict)", "passed",
                                html.escape(audit) + (f"; largest imbalance / tolerance "
                                                      f"{fmt(s.get('audit_balance_use'), 3)}"
                                                      if "audit_balance_use" in s else ""),
                                audit.startswith("passed")))
    # The modes per contact: the order of the mode digits, vouched for by the summary's symbols.
    try:
        order = contacts.contact_order(r)
        note = contacts.mode_column_note(r, order)
        sec.checks.append(Check("modes per contact match the summary's symbols", "identical sequences",
                                "; ".join(f"{html.escape(n)}: {html.escape(str(s.get('symbols_' + n)))}"
                                          for n in order), True))
        if note:
            sec.body.append(f'<p class="note">{html.escape(note)}.</p>')
    except contacts.ContactDataError as exc:
        sec.checks.append(Check("modes per contact match the summary's symbols", "identical sequences",
                                html.escape(str(exc)), False))
        order = None

    ph = contacts.phases(r, order) if order is not None else []
    if order is not None:
        # Event counts against the summary's n_KIND.
        kinds = np.asarray(r.events.get("kind", []), str)
        diffs = [f"{k}: {count((kinds == k).sum(), 'event')}, summary {int(s[f'n_{k}'])}"
                 for k in contacts.ENGINE_EVENT_KINDS if f"n_{k}" in s and int((kinds == k).sum()) != int(s[f"n_{k}"])]
        counted = [f"{k} {int((kinds == k).sum())}" for k in contacts.ENGINE_EVENT_KINDS if (kinds == k).any()]
        sec.checks.append(Check("events by kind agree with the summary's counts", "equal",
                                ", ".join(counted) or "no contact events" if not diffs else "; ".join(diffs),
                                not diffs))

    # Energy ledger.
    led = None
    try:
        led = contacts.ledger(r)
    except contacts.ContactDataError as exc:
        sec.checks.append(Check("energy ledger", "the file has the energy columns", html.escape(str(exc)), False))
    if led is not None:
        tol = LEDGER_ROUNDING * max(led.scale, abs(led.initial), 1e-300)
        diff = abs(led.lost_at_impacts - led.dissipated_impact)
        sec.checks.append(Check("losses at the impacts add up to dissipated_impact",
                                f"|Σ kinetic_energy_loss − dissipated_impact(t_end)| ≤ {LEDGER_ROUNDING:g} max |h| "
                                f"= {fmt(tol, 3)} J",
                                f"{fmt(led.lost_at_impacts, TABLE_DIGITS)} J over "
                                f"{count(led.n_impacts, 'impact or capture', 'impacts and captures')}, "
                                f"state {fmt(led.dissipated_impact, TABLE_DIGITS)} J: difference "
                                f"{fmt(diff, 3)} J", diff <= tol))
        if np.isfinite(led.balance_output_mismatch):
            sec.checks.append(Check("balance recomputed from its terms equals the energy_balance output",
                                    f"≤ {LEDGER_ROUNDING:g} max |h| = {fmt(tol, 3)} J",
                                    f"largest difference {fmt(led.balance_output_mismatch, 3)} J",
                                    led.balance_output_mismatch <= tol))
        rt = r.solver.get("rtol")
        tr = r.trajectory
        kinetic, potential = tr.with_role("energy.kinetic"), tr.with_role("energy.potential")
        stored = (float(np.max(sum(np.asarray(tr[n], float) for n in kinetic)
                               + sum(np.abs(np.asarray(tr[n], float)) for n in potential)))
                  if kinetic and potential else led.scale)
        if isinstance(rt, (int, float)):
            lim = ENERGY_DRIFT_FACTOR * float(rt) * stored
            sec.checks.append(Check("drift of the energy balance", f"max |h + losses − initial| ≤ "
                                    f"{ENERGY_DRIFT_FACTOR:g} rtol × max(T + |V|) = {fmt(lim, 3)} J",
                                    f"{fmt(led.drift_max, 3)} J (max(T + |V|) = {fmt(stored, 4)} J)",
                                    led.drift_max <= lim))
        rows = [["initial balance h + losses", fmt(led.initial, TABLE_DIGITS)],
                ["lost at impacts (Σ kinetic_energy_loss over impacts and captures)",
                 fmt(led.lost_at_impacts, TABLE_DIGITS)],
                ["dissipated_impact at the end", fmt(led.dissipated_impact, TABLE_DIGITS)],
                ["lost in slip (dissipated_friction at the end)", fmt(led.dissipated_friction, TABLE_DIGITS)],
                ["largest drift |h + losses − initial|", fmt(led.drift_max, TABLE_DIGITS)],
                ["drift at the end", fmt(led.drift_final, TABLE_DIGITS)],
                ["largest drift relative to max |h|", fmt(led.drift_rel, 4)]]
        sec.body.append("<h3>Energy</h3>" + table_html(["quantity", "value [J]"], rows, cls="data contact-energy"))

    if order is not None:
        prow = []
        for p in ph[:MAX_PHASE_ROWS]:
            if p.contacts:
                for n in p.contacts:
                    b, a = _mode_change(p, n)
                    prow.append([fmt(p.time, TABLE_DIGITS), html.escape(p.kind), html.escape(n), b, a])
            else:
                prow.append([fmt(p.time, TABLE_DIGITS), html.escape(p.kind), "–", "–", "–"])
        cut = (f'<p class="note">The first {MAX_PHASE_ROWS} of {len(ph)} events.</p>'
               if len(ph) > MAX_PHASE_ROWS else "")
        # The events whose modes or impulses the LCP narrowed (nonsmooth.mode_selection), with what it left.
        ev = r.events or {}
        lcp_notes = []
        for col, what in (("lcp_candidates", "modes"), ("lcp_impulse_candidates", "impulses")):
            v = np.asarray(ev.get(col, []), float)
            used = v[np.isfinite(v)]
            if used.size:
                lcp_notes.append(f"{what} at {count(used.size, 'event')} "
                                 f"(combinations left: at most {int(used.max())})")
        if lcp_notes:
            cut += (f'<p class="note">Chosen through the contacts\' LCP (Lemke, then the enumeration over what it '
                    f'left): {html.escape("; ".join(lcp_notes))}.</p>')
        sec.body.append(f"<h3>Phases ({count(len(ph), 'event')})</h3>" + cut + '<div class="scroll">' + table_html(
            ["time [s]", "kind", "contact", "mode before", "mode after"], prow, cls="data contact-phases") + "</div>")
        irow = []
        for im in contacts.impacts(r, order):
            for i, n in enumerate(im.contacts or ["–"]):  # the event's loss on its first row
                irow.append([fmt(im.time, TABLE_DIGITS), html.escape(im.kind), html.escape(n),
                             fmt(im.impulse_normal.get(n), TABLE_DIGITS),
                             fmt(im.impulse_tangential.get(n), TABLE_DIGITS),
                             fmt(im.kinetic_energy_loss if i == 0 else None, TABLE_DIGITS)])
        if irow:
            sec.body.append(f"<h3>Impacts ({len(contacts.impacts(r, order))})</h3>" + '<div class="scroll">'
                            + table_html(["time [s]", "kind", "contact", "normal impulse [N s]",
                                          "tangential impulse [N s]", "kinetic energy loss [J]"], irow,
                                         cls="data contact-impacts") + "</div>")
    figs = plot.figures(r)
    if figs:
        sec.figures.append(("Contact views of the run (tools/plot)", png(figs[0])))
    return sec
