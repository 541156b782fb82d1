#!/usr/bin/env python3
"""Run the verification experiments with the built `cardiac` and print the Markdown tables of
docs/validation.md. Usage: python3 bench/validation_tables.py [build/pipeline/cardiac]"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARDIAC = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/pipeline/cardiac")


def run(config, *overrides):
    with tempfile.TemporaryDirectory() as out:
        cmd = [CARDIAC, "run", str(ROOT / "configs/experiments" / f"{config}.yaml"), "-o", out, "--threads", "2"]
        for o in overrides:
            cmd += ["--set", o]
        t0 = time.time()
        subprocess.run(cmd, check=True, capture_output=True)
        summary = json.loads((Path(out) / "summary.json").read_text())
        summary["wall_s"] = time.time() - t0
        return summary


def pct(measured, expected):
    return 100.0 * (measured - expected) / expected


def material_constants():
    print("| element | nu | E [kPa] (err %) | nu_y (err %) | G [kPa] (err %) | K [kPa] (err %) |")
    print("|---|---|---|---|---|---|")
    E = 10.0
    for element in ("bourguignon_cani", "baudet_cube"):
        for nu in (0.3, 0.4, 0.45):
            G, K = E / (2 * (1 + nu)), E / (3 * (1 - 2 * nu))
            common = [f"element.type={element}", f"material.poisson_ratio={nu}"]
            el = run("elongation", *common)["measured"]
            sh = run("shear", *common)["measured"]
            inf = run("inflation", *common, f"experiment.pressure={-0.01 * K} kPa")["measured"]
            print(f"| {element} | {nu} | {el['youngs_modulus_kPa']:.4f} ({pct(el['youngs_modulus_kPa'], E):+.2f}) "
                  f"| {el['poisson_ratio_y']:.4f} ({pct(el['poisson_ratio_y'], nu):+.2f}) "
                  f"| {sh['shear_modulus_kPa']:.4f} ({pct(sh['shear_modulus_kPa'], G):+.2f}) "
                  f"| {inf['bulk_modulus_kPa']:.4f} ({pct(inf['bulk_modulus_kPa'], K):+.2f}) |")


def cantilever():
    print("| element | voxels | h [mm] | elements | tip [mm] | Euler-Bernoulli [mm] (err %) | Timoshenko [mm] (err %) | max error along beam (% of tip, vs E-B) | run time [s] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for element in ("bourguignon_cani", "baudet_cube"):
        for voxels, h in (("[20,2,2]", 2.0), ("[40,4,4]", 1.0), ("[80,8,8]", 0.5)):
            s = run("cantilever", f"block.voxels={voxels}", f"block.voxel_size={h} mm", f"element.type={element}")
            m = s["measured"]
            print(f"| {element} | {voxels} | {h} | {s['run']['elements']} | {m['tip_deflection_mm']:.5f} "
                  f"| {m['euler_bernoulli_tip_mm']:.5f} ({m['tip_error_percent']:+.2f}) "
                  f"| {m['timoshenko_tip_mm']:.5f} ({m['tip_error_vs_timoshenko_percent']:+.3f}) "
                  f"| {m['max_error_percent_of_tip']:.2f} | {s['run']['wall_time_s']:.2f} |")


def anisotropy():
    print("| fibres | axial strain | shear strain xz | expected shear strain xz |")
    print("|---|---|---|---|")
    for name, o in (("along x", ["fibres.direction=[1,0,0]"]), ("along y", ["fibres.direction=[0,1,0]", "fibres.sheet=[1,0,0]"]),
                    ("45 deg in x-z", [])):
        m = run("anisotropy", *o)["measured"]
        print(f"| {name} | {m['axial_strain']:.5f} | {m['shear_strain_xz']:.5f} | {m['expected']['shear_strain_xz']:.5f} |")


def volume():
    print("| model | nu | volume change at 10 % stretch [%] |")
    print("|---|---|---|")
    for name, o in (("volume terms (J), default", ["material.poisson_ratio=0.45"]),
                    ("no volume terms", ["material.poisson_ratio=0.45", "element.volume_terms=false"]),
                    ("paper's radial springs only", ["material.poisson_ratio=0.25", "element.radial_share=1"]),
                    ("Baudet cube", ["material.poisson_ratio=0.45", "element.type=baudet_cube"])):
        m = run("elongation", "experiment.strain=0.1", *o)["measured"]
        print(f"| {name} | {o[0].split('=')[1]} | {m['volume_change_percent']:.3f} |")


if __name__ == "__main__":
    for title, fn in (("Material constants at 1 % strain", material_constants), ("Cantilever", cantilever),
                      ("Anisotropy", anisotropy), ("Volume", volume)):
        print(f"\n### {title}\n")
        fn()
