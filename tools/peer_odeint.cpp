// peer_odeint: a compiled peer of rollsim for the benchmarks, as tools/peer_scipy.py is a Python one.
//
// The same two problems as peer_scipy.py, integrated by Boost.Odeint's runge_kutta_dopri5 used as a controlled
// dense-output stepper (make_dense_output(atol, rtol, runge_kutta_dopri5<...>())), events found on the dense
// output: after each step the event functions' signs at the step's two ends are compared (scipy's rule: up is
// g_old <= 0 <= g_new, down is g_old >= 0 >= g_new), and a root is located in [t_old, t] by the Illinois method
// (regula falsi with halving of the stale end) on calc_state, to about 1e-15 relative in t.
//
// Tipping table (docs/equations.md §1): the Lagrange equations of the wheel on the table,
//     (I + m s^2) th1'' + 2 m s s' th1' - m r s th1'^2 + m g s cos th1 = 0
//     (J + m r^2) th2'' + m r s th1'^2 - m g r sin th1 = 0,      s = r (th1 - th2)
// events: the table edge |s| = l/2 (terminal, downward) and the normal force N = 0 (downward, the first one
// recorded; terminal with --stop-at-lift-off).
//
// Rolling disk (docs/equations.md §2, dimensionless), k = 1 + j: the fields
//     F+ = (y, -k x - j, -k (x + 1)),  F- = (y, -k x + j, -k (x - 1)),  F0 = (y, -x, 0)
// and the mode-switching loop of peer_scipy.disk_run: sliding ends at z = 0 (rolling if |x| < 1 there, else the
// other sliding mode), rolling ends at x = 1 (upward, to '-') or x = -1 (downward, to '+'); the state is reset at
// each event as there (z = 0, and x = +-1 at the end of rolling); each segment starts afresh (initial step by
// Hairer's rule, as solve_ivp does).
//
// Usage:
//   peer_odeint table [--theta1 0.01] [--rtol 1e-10] [--atol 1e-12] [--t-end 10] [--stop-at-lift-off]
//                     [--repeat N] [--spread S]
//   peer_odeint disk --x X --y Y --z Z [--j 0.5] [--t-end 60] [--rtol 1e-10] [--atol 1e-12] [--repeat N] [--spread S]
// prints one JSON line: the fields peer_scipy.py prints (plus nfev and steps), and with --repeat N the median,
// minimum and maximum wall time per trajectory over N timed runs (median_us, min_us, max_us; steady_clock, in this
// process), run k of them starting from the start scaled by (1 + S k / (N - 1)): theta1 for the table, x for the
// disk. The result printed is that of an untimed first run from the unscaled start.
//
// Build (tools/bench does it when missing or stale): c++ -std=c++20 -O3 -DNDEBUG tools/peer_odeint.cpp -o peer_odeint

#include <boost/numeric/odeint.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace odeint = boost::numeric::odeint;

namespace {

constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------- shared machinery

template <std::size_t N>
double rms_scaled(const std::array<double, N>& v, const std::array<double, N>& scale)
{
    double s = 0.0;
    for (std::size_t i = 0; i < N; ++i) s += (v[i] / scale[i]) * (v[i] / scale[i]);
    return std::sqrt(s / N);
}

// Hairer's starting step (Hairer, Norsett & Wanner I, II.4; scipy's select_initial_step with the error estimator's
// order 4 of the 5(4) pair). Costs two evaluations of f.
template <std::size_t N, class Sys>
double initial_step(Sys& sys, double t0, const std::array<double, N>& y0, double t_end, double rtol, double atol)
{
    using S = std::array<double, N>;
    const double span = t_end - t0;
    if (span <= 0.0) return 0.0;
    S f0, y1, f1, scale;
    sys(y0, f0, t0);
    for (std::size_t i = 0; i < N; ++i) scale[i] = atol + std::abs(y0[i]) * rtol;
    const double d0 = rms_scaled(y0, scale), d1 = rms_scaled(f0, scale);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::min(h0, span);
    for (std::size_t i = 0; i < N; ++i) y1[i] = y0[i] + h0 * f0[i];
    sys(y1, f1, t0 + h0);
    for (std::size_t i = 0; i < N; ++i) f1[i] -= f0[i];
    const double d2 = rms_scaled(f1, scale) / h0;
    const double h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? std::max(1e-6, h0 * 1e-3)
                                                   : std::pow(0.01 / std::max(d1, d2), 1.0 / 5.0);
    return std::min({100.0 * h0, h1, span});
}

// scipy's rule for a sign change of an event function between two points, by direction (-1, 0, +1).
inline bool crosses(double g_old, double g_new, int direction)
{
    const bool up = g_old <= 0.0 && g_new >= 0.0;
    const bool down = g_old >= 0.0 && g_new <= 0.0;
    if (direction > 0) return up;
    if (direction < 0) return down;
    return up || down;
}

// The root of g on [a, b] with g(a) = ga, g(b) = gb of opposite signs (or one zero), by the Illinois method with a
// bisection step whenever the secant point falls outside (a, b); stops when b - a is below 1e-15 relative (a few
// ulps) or g is exactly zero. Returns the end on the far side of the crossing (where the sign has changed).
template <class G>
double locate_root(G&& g, double a, double ga, double b, double gb)
{
    if (gb == 0.0) return b;
    if (ga == 0.0) return a;
    int last = 0;  // which end moved last: -1 a, +1 b
    for (int it = 0; it < 200; ++it) {
        if (b - a <= 1e-15 * std::max(std::abs(a), std::abs(b)) + 1e-300) break;
        double c = b - gb * (b - a) / (gb - ga);
        if (!(c > a && c < b)) c = 0.5 * (a + b);
        if (!(c > a && c < b)) break;  // a and b are adjacent doubles
        const double gc = g(c);
        if (gc == 0.0) return c;
        if ((gc > 0.0) == (gb > 0.0)) {
            b = c, gb = gc;
            if (last == 1) ga *= 0.5;  // Illinois: b moved twice in a row, so halve the stale g(a)
            last = 1;
        } else {
            a = c, ga = gc;
            if (last == -1) gb *= 0.5;
            last = -1;
        }
    }
    return b;
}

// ---------------------------------------------------------------- tipping table

using S4 = std::array<double, 4>;
using S3 = std::array<double, 3>;

struct Table {
    double m = 1.0, r = 0.25, M = 1.0, l = 1.0, g = 9.81;
    double J = 0.5 * 1.0 * 0.25 * 0.25;  // 0.5 m r^2
    double I = 1.0 * 1.0 * 1.0 / 12.0;   // M l^2 / 12

    double accel1(const S4& x) const
    {
        const double th1 = x[0], th2 = x[1], w1 = x[2], w2 = x[3];
        const double s = r * (th1 - th2), sd = r * (w1 - w2);
        return -(2 * m * s * sd * w1 - m * r * s * w1 * w1 + m * g * s * std::cos(th1)) / (I + m * s * s);
    }
    void rhs(const S4& x, S4& dx) const
    {
        const double th1 = x[0], th2 = x[1], w1 = x[2];
        const double s = r * (th1 - th2);
        dx[0] = w1;
        dx[1] = x[3];
        dx[2] = accel1(x);
        dx[3] = (m * g * r * std::sin(th1) - m * r * s * w1 * w1) / (J + m * r * r);
    }
    double normal_force(const S4& x) const
    {
        const double th1 = x[0], th2 = x[1], w1 = x[2], w2 = x[3];
        const double s = r * (th1 - th2), sd = r * (w1 - w2);
        return m * (2 * sd * w1 + s * accel1(x) - r * w1 * w1) + m * g * std::cos(th1);
    }
    double edge(const S4& x) const { return 0.5 * l - std::abs(r * (x[0] - x[1])); }
};

struct TableSys {
    const Table* p;
    long* nfev;
    void operator()(const S4& x, S4& dx, double) const
    {
        ++*nfev;
        p->rhs(x, dx);
    }
};

struct TableResult {
    double t_final = NaN, t_edge = NaN, t_lift_off = NaN;
    S4 x_final{};
    long nfev = 0, steps = 0;
    int status = 0;  // 0: reached t_end, 1: a terminal event
};

using Dopri4 = odeint::runge_kutta_dopri5<S4>;
using Dense4 = odeint::result_of::make_dense_output<Dopri4>::type;
using Dopri3 = odeint::runge_kutta_dopri5<S3>;
using Dense3 = odeint::result_of::make_dense_output<Dopri3>::type;

void table_run(const Table& tab, Dense4& st, double theta1, double t_end, bool stop_at_lift_off, double rtol,
               double atol, TableResult& res)
{
    res = TableResult{};
    TableSys sys{&tab, &res.nfev};
    const S4 x0{theta1, 0.0, 0.0, 0.0};
    st.initialize(x0, 0.0, initial_step<4>(sys, 0.0, x0, t_end, rtol, atol));
    double g_edge = tab.edge(x0), g_lift = tab.normal_force(x0);
    S4 xi;
    for (;;) {
        const auto [t_old, t_step] = st.do_step(sys);
        ++res.steps;
        const bool past_end = t_step >= t_end;
        const double t_new = past_end ? t_end : t_step;
        const S4* xn = &st.current_state();
        if (past_end) {
            st.calc_state(t_end, xi);
            xn = &xi;
        }
        const double ge = tab.edge(*xn), gl = tab.normal_force(*xn);
        double t_stop = std::numeric_limits<double>::infinity();
        if (crosses(g_edge, ge, -1)) {
            t_stop = locate_root([&](double t) { st.calc_state(t, xi); return tab.edge(xi); }, t_old, g_edge, t_new, ge);
            res.t_edge = t_stop;
        }
        if (std::isnan(res.t_lift_off) && crosses(g_lift, gl, -1)) {
            const double tl = locate_root([&](double t) { st.calc_state(t, xi); return tab.normal_force(xi); },
                                          t_old, g_lift, t_new, gl);
            if (tl <= t_stop) {
                res.t_lift_off = tl;
                if (stop_at_lift_off) t_stop = tl, res.t_edge = NaN;
            }
        }
        if (t_stop <= t_new) {
            st.calc_state(t_stop, res.x_final);
            res.t_final = t_stop;
            res.status = 1;
            return;
        }
        if (past_end) {
            res.x_final = *xn;
            res.t_final = t_end;
            return;
        }
        g_edge = ge, g_lift = gl;
    }
}

// ---------------------------------------------------------------- rolling disk

struct DiskSys {
    int mode;  // +1: F+, -1: F-, 0: F0
    double j, k;
    long* nfev;
    void operator()(const S3& s, S3& d, double) const
    {
        ++*nfev;
        d[0] = s[1];
        if (mode == 1) {
            d[1] = -k * s[0] - j;
            d[2] = -k * (s[0] + 1.0);
        } else if (mode == -1) {
            d[1] = -k * s[0] + j;
            d[2] = -k * (s[0] - 1.0);
        } else {
            d[1] = -s[0];
            d[2] = 0.0;
        }
    }
};

struct DiskResult {
    std::string symbols;  // reused across runs: its capacity stays
    double t_final = NaN, rolling_radius = NaN;
    S3 x_final{};
    int final_mode = 0;
    long n_switches = 0, nfev = 0, steps = 0;
};

inline char symbol(int mode) { return mode == 1 ? '+' : mode == -1 ? '-' : '0'; }

void disk_run(Dense3& st, double x0, double y0, double z0, double j, double t_end, double rtol, double atol,
              DiskResult& res, long max_switches = 100000)
{
    const double k = 1.0 + j;
    res.symbols.clear();
    res.rolling_radius = NaN;
    res.n_switches = res.nfev = res.steps = 0;
    double t = 0.0;
    S3 state{x0, y0, z0};
    int mode;
    if (z0 > 0)
        mode = 1;
    else if (z0 < 0)
        mode = -1;
    else if (std::abs(x0) < 1)
        mode = 0;
    else
        mode = x0 > 0 ? -1 : 1;  // on z = 0 outside the strip both fields point the same way
    res.symbols.push_back(symbol(mode));
    if (mode == 0) res.rolling_radius = std::hypot(state[0], state[1]);
    S3 xi;
    while (t < t_end && res.n_switches < max_switches) {
        DiskSys sys{mode, j, k, &res.nfev};
        st.initialize(state, t, initial_step<3>(sys, t, state, t_end, rtol, atol));
        // Sliding: the event z = 0 (downward in '+', upward in '-'). Rolling: x - 1 upward, x + 1 downward.
        const int zdir = mode == 1 ? -1 : 1;
        double ga = mode == 0 ? state[0] - 1.0 : state[2];
        double gb = state[0] + 1.0;
        bool event = false, hi = false;
        double t_ev = 0.0;
        for (;;) {
            const auto [t_old, t_step] = st.do_step(sys);
            ++res.steps;
            const bool past_end = t_step >= t_end;
            const double t_new = past_end ? t_end : t_step;
            const S3* xn = &st.current_state();
            if (past_end) {
                st.calc_state(t_end, xi);
                xn = &xi;
            }
            if (mode != 0) {
                const double gn = (*xn)[2];
                if (crosses(ga, gn, zdir)) {
                    t_ev = locate_root([&](double tt) { st.calc_state(tt, xi); return xi[2]; }, t_old, ga, t_new, gn);
                    event = true;
                }
                ga = gn;
            } else {
                const double gan = (*xn)[0] - 1.0, gbn = (*xn)[0] + 1.0;
                double t_hi = std::numeric_limits<double>::infinity(), t_lo = t_hi;
                if (crosses(ga, gan, 1))
                    t_hi = locate_root([&](double tt) { st.calc_state(tt, xi); return xi[0] - 1.0; }, t_old, ga, t_new, gan);
                if (crosses(gb, gbn, -1))
                    t_lo = locate_root([&](double tt) { st.calc_state(tt, xi); return xi[0] + 1.0; }, t_old, gb, t_new, gbn);
                if (t_hi <= t_new || t_lo <= t_new) {
                    event = true;
                    hi = t_hi <= t_lo;
                    t_ev = hi ? t_hi : t_lo;
                }
                ga = gan, gb = gbn;
            }
            if (event) {
                st.calc_state(t_ev, state);
                t = t_ev;
                break;
            }
            if (past_end) {
                state = *xn;
                t = t_end;
                break;
            }
        }
        if (!event) break;  // reached t_end
        ++res.n_switches;
        if (mode == 0) {
            state[0] = hi ? 1.0 : -1.0;
            state[2] = 0.0;
            mode = hi ? -1 : 1;
        } else {
            state[2] = 0.0;
            if (std::abs(state[0]) < 1.0) {
                mode = 0;
                res.rolling_radius = std::hypot(state[0], state[1]);
            } else {
                mode = -mode;
            }
        }
        res.symbols.push_back(symbol(mode));
    }
    res.t_final = t;
    res.x_final = state;
    res.final_mode = mode;
}

// ---------------------------------------------------------------- command line and output

void fmt(std::string& out, double v)
{
    char buf[40];
    if (std::isnan(v))
        std::snprintf(buf, sizeof buf, "NaN");  // as Python's json.dumps writes it
    else if (std::isinf(v))
        std::snprintf(buf, sizeof buf, v > 0 ? "Infinity" : "-Infinity");
    else {
        // the shortest of 15, 16 or 17 significant digits that reads back as v, and a float written as one
        for (int prec = 15; prec <= 17; ++prec) {
            std::snprintf(buf, sizeof buf, "%.*g", prec, v);
            if (std::strtod(buf, nullptr) == v) break;
        }
        if (!std::strpbrk(buf, ".en")) std::strcat(buf, ".0");
    }
    out += buf;
}

void field(std::string& out, const char* key, double v)
{
    out += out.size() > 1 ? ", \"" : "\"";
    out += key;
    out += "\": ";
    fmt(out, v);
}

void field_int(std::string& out, const char* key, long v)
{
    out += out.size() > 1 ? ", \"" : "\"";
    out += key;
    out += "\": ";
    out += std::to_string(v);
}

template <std::size_t N>
void field_vec(std::string& out, const char* key, const std::array<double, N>& v)
{
    out += out.size() > 1 ? ", \"" : "\"";
    out += key;
    out += "\": [";
    for (std::size_t i = 0; i < N; ++i) {
        if (i) out += ", ";
        fmt(out, v[i]);
    }
    out += "]";
}

[[noreturn]] void usage(const char* msg)
{
    std::fprintf(stderr,
                 "peer_odeint: %s\n"
                 "usage: peer_odeint table [--theta1 0.01] [--rtol 1e-10] [--atol 1e-12] [--t-end 10] "
                 "[--stop-at-lift-off] [--repeat N] [--spread S]\n"
                 "       peer_odeint disk --x X --y Y --z Z [--j 0.5] [--t-end 60] [--rtol 1e-10] [--atol 1e-12] "
                 "[--repeat N] [--spread S]\n",
                 msg);
    std::exit(2);
}

double number(const char* key, const char* s)
{
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    if (end == s || *end != '\0') {
        std::string m = std::string("not a number for ") + key + ": " + s;
        usage(m.c_str());
    }
    return v;
}

volatile double g_sink;  // each timed run's result goes here, so that the work cannot be dropped

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) usage("which problem: table or disk");
    const std::string what = argv[1];
    if (what != "table" && what != "disk") usage("the problem is table or disk");
    const bool table = what == "table";
    double theta1 = 0.01, x = NaN, y = NaN, z = NaN, j = 0.5;
    double t_end = table ? 10.0 : 60.0, rtol = 1e-10, atol = 1e-12, spread = 0.0;
    long repeat = 0;
    bool stop_at_lift_off = false;
    for (int i = 2; i < argc; ++i) {
        std::string key = argv[i], val;
        const auto eq = key.find('=');
        if (eq != std::string::npos) {
            val = key.substr(eq + 1);
            key.resize(eq);
        }
        if (key == "--stop-at-lift-off" && table) {
            stop_at_lift_off = true;
            continue;
        }
        if (eq == std::string::npos) {
            if (i + 1 >= argc) usage(("no value for " + key).c_str());
            val = argv[++i];
        }
        const double v = number(key.c_str(), val.c_str());
        if (key == "--rtol") rtol = v;
        else if (key == "--atol") atol = v;
        else if (key == "--t-end") t_end = v;
        else if (key == "--repeat") repeat = static_cast<long>(v);
        else if (key == "--spread") spread = v;
        else if (table && key == "--theta1") theta1 = v;
        else if (!table && key == "--x") x = v;
        else if (!table && key == "--y") y = v;
        else if (!table && key == "--z") z = v;
        else if (!table && key == "--j") j = v;
        else usage(("unknown option " + key + " for " + what).c_str());
    }
    if (!table && (std::isnan(x) || std::isnan(y) || std::isnan(z))) usage("disk needs --x, --y and --z");
    if (!(rtol > 0) || !(atol > 0) || !(t_end > 0) || repeat < 0) usage("rtol, atol and t-end must be > 0");

    std::vector<double> us(static_cast<std::size_t>(repeat));
    std::string out = "{";
    using clock = std::chrono::steady_clock;
    auto scale = [&](long k) { return repeat > 1 ? 1.0 + spread * double(k) / double(repeat - 1) : 1.0; };
    if (table) {
        const Table tab;
        Dense4 st = odeint::make_dense_output(atol, rtol, Dopri4());
        TableResult r, rk;
        table_run(tab, st, theta1, t_end, stop_at_lift_off, rtol, atol, r);
        for (long k = 0; k < repeat; ++k) {
            const double th = theta1 * scale(k);
            const auto t0 = clock::now();
            table_run(tab, st, th, t_end, stop_at_lift_off, rtol, atol, rk);
            const auto t1 = clock::now();
            g_sink = g_sink + rk.t_final + rk.x_final[0];
            us[k] = std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
        field(out, "t_final", r.t_final);
        field_vec(out, "x_final", r.x_final);
        field(out, "t_edge", r.t_edge);
        field(out, "t_lift_off", r.t_lift_off);
        field_int(out, "nfev", r.nfev);
        field_int(out, "steps", r.steps);
        field_int(out, "status", r.status);
    } else {
        Dense3 st = odeint::make_dense_output(atol, rtol, Dopri3());
        DiskResult r, rk;
        r.symbols.reserve(4096);
        rk.symbols.reserve(4096);
        disk_run(st, x, y, z, j, t_end, rtol, atol, r);
        for (long k = 0; k < repeat; ++k) {
            const double xk = x * scale(k);
            const auto t0 = clock::now();
            disk_run(st, xk, y, z, j, t_end, rtol, atol, rk);
            const auto t1 = clock::now();
            g_sink = g_sink + rk.t_final + rk.x_final[0] + double(rk.symbols.size());
            us[k] = std::chrono::duration<double, std::micro>(t1 - t0).count();
        }
        out += "\"symbols\": \"" + r.symbols + "\"";
        field(out, "t_final", r.t_final);
        field_vec(out, "x_final", r.x_final);
        field_int(out, "final_mode", r.final_mode);
        field(out, "rolling_radius", r.rolling_radius);
        field_int(out, "n_switches", r.n_switches);
        field_int(out, "nfev", r.nfev);
        field_int(out, "steps", r.steps);
    }
    field(out, "rtol", rtol);
    field(out, "atol", atol);
    if (repeat > 0) {
        std::vector<double> sorted = us;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t n = sorted.size();
        const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        field_int(out, "repeat", repeat);
        field(out, "spread", spread);
        field(out, "median_us", median);
        field(out, "min_us", sorted.front());
        field(out, "max_us", sorted.back());
    }
    out += "}";
    std::puts(out.c_str());
    return 0;
}
