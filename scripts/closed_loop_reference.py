#!/usr/bin/python3
"""A second, independent integration of the closed-loop circulation of Regazzoni et al. 2022
(J Comput Phys 457:111083), to cross-check modules/circulation/closed_loop: the same equations
and parameters (docs/heartbeat.md, "Closed-loop circulation (module)"), written out directly and
integrated by forward Euler at 0.1 ms (the C++ module uses backward Euler with an active-set
valve solve). Prints each beat's LV/RV volumes, EF and arterial pressures, and the total volume.

Run: /usr/bin/python3 scripts/closed_loop_reference.py   (30 beats, a few seconds)
"""
import math

T_HB = 0.8  # s
DT = 1e-4  # s
BEATS = 30

# Chambers: E_A, E_B [mmHg/mL], V0 [mL], t_C, T_C, T_R [fractions of T_HB].
CHAMBERS = {
    "LA": (0.07, 0.09, 4.0, 0.80, 0.17, 0.17),
    "RA": (0.06, 0.07, 4.0, 0.80, 0.17, 0.17),
    "LV": (2.75, 0.08, 5.0, 0.00, 0.34, 0.17),
    "RV": (0.55, 0.05, 10.0, 0.00, 0.34, 0.17),
}
R_MIN, R_MAX = 0.0075, 75006.2  # mmHg s/mL
# R [mmHg s/mL], C [mL/mmHg], L [mmHg s^2/mL]
SYS_AR, SYS_VEN = (0.8, 1.2, 5e-3), (0.26, 60.0, 5e-4)
PUL_AR, PUL_VEN = (0.1625, 10.0, 5e-4), (0.1625, 16.0, 5e-4)


def activation(t, onset, contraction, relaxation):
    tau = (t - onset * T_HB) % T_HB
    if tau < contraction * T_HB:
        return 0.5 * (1 - math.cos(math.pi * tau / (contraction * T_HB)))
    if tau - contraction * T_HB < relaxation * T_HB:
        return 0.5 * (1 + math.cos(math.pi * (tau - contraction * T_HB) / (relaxation * T_HB)))
    return 0.0


def chamber_pressure(name, volume, t):
    e_a, e_b, v0, onset, contraction, relaxation = CHAMBERS[name]
    return (e_b + e_a * activation(t, onset, contraction, relaxation)) * (volume - v0)


def valve(p_up, p_down):
    return (p_up - p_down) / (R_MIN if p_up > p_down else R_MAX)


def main():
    v = {"LA": 65.0, "LV": 120.0, "RA": 65.0, "RV": 145.0}
    p_sa, p_sv, p_pa, p_pv = 80.0, 30.0, 35.0, 24.0
    q_sa = q_sv = q_pa = q_pv = 0.0
    t = 0.0
    for beat in range(1, BEATS + 1):
        lv, rv, sa, pa = [], [], [], []
        for _ in range(int(round(T_HB / DT))):
            p = {k: chamber_pressure(k, v[k], t) for k in v}
            q_mv, q_av = valve(p["LA"], p["LV"]), valve(p["LV"], p_sa)
            q_tv, q_pv_valve = valve(p["RA"], p["RV"]), valve(p["RV"], p_pa)
            v["LA"] += DT * (q_pv - q_mv)
            v["LV"] += DT * (q_mv - q_av)
            v["RA"] += DT * (q_sv - q_tv)
            v["RV"] += DT * (q_tv - q_pv_valve)
            dp_sa, dp_sv = (q_av - q_sa) / SYS_AR[1], (q_sa - q_sv) / SYS_VEN[1]
            dp_pa, dp_pv = (q_pv_valve - q_pa) / PUL_AR[1], (q_pa - q_pv) / PUL_VEN[1]
            dq_sa = (p_sa - p_sv - SYS_AR[0] * q_sa) / SYS_AR[2]
            dq_sv = (p_sv - p["RA"] - SYS_VEN[0] * q_sv) / SYS_VEN[2]
            dq_pa = (p_pa - p_pv - PUL_AR[0] * q_pa) / PUL_AR[2]
            dq_pv = (p_pv - p["LA"] - PUL_VEN[0] * q_pv) / PUL_VEN[2]
            p_sa, p_sv, p_pa, p_pv = p_sa + DT * dp_sa, p_sv + DT * dp_sv, p_pa + DT * dp_pa, p_pv + DT * dp_pv
            q_sa, q_sv, q_pa, q_pv = q_sa + DT * dq_sa, q_sv + DT * dq_sv, q_pa + DT * dq_pa, q_pv + DT * dq_pv
            t += DT
            lv.append(v["LV"])
            rv.append(v["RV"])
            sa.append(p_sa)
            pa.append(p_pa)
        total = sum(v.values()) + SYS_AR[1] * p_sa + SYS_VEN[1] * p_sv + PUL_AR[1] * p_pa + PUL_VEN[1] * p_pv
        print(f"beat {beat:2d}: LV EDV {max(lv):6.2f} ESV {min(lv):6.2f} EF {100 * (1 - min(lv) / max(lv)):5.2f} % | "
              f"RV EDV {max(rv):6.2f} ESV {min(rv):6.2f} | aortic {max(sa):6.2f}/{min(sa):5.2f} | "
              f"pulmonary {max(pa):5.2f}/{min(pa):5.2f} mmHg | total {total:.4f} mL")


if __name__ == "__main__":
    main()
