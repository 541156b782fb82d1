#include "config/circulation_config.hpp"

#include <cmath>

#include "cardio/core/error.hpp"
#include "cardio/core/units.hpp"

namespace cardio::pipeline {
namespace {

using circulation::ChamberParams;
using circulation::ClosedLoopParams;
using circulation::Compartment;
using circulation::VesselParams;
using config::Node;
using config::Range;
using units::Dimension;

// Internal units (kPa, mm^3, ms) per circulation unit (mmHg, mL, ms).
constexpr double kMmHg = units::kMmHgInKPa;
constexpr double kPerMl = units::kMmHgInKPa / 1e3;  // mmHg/mL, mmHg ms/mL, mmHg ms^2/mL in kPa/mm^3 (x ms, ms^2)
constexpr double kMlPerMmHg = 1e3 / units::kMmHgInKPa;

std::vector<circulation::CavityCirculation> parse_windkessel_cavities(const Node& n, double first_onset,
                                                                      double period) {
  std::vector<circulation::CavityCirculation> out;
  for (const Node& c : n.list("cavities")) {
    circulation::CavityCirculation cav;
    cav.name = c.text("name", std::nullopt);
    auto& b = cav.beat;
    b.end_diastolic_pressure_mmHg = c.quantity("end_diastolic_pressure", Dimension::pressure, 8 * kMmHg) / kMmHg;
    b.atrial_pressure_mmHg = c.quantity("atrial_pressure", Dimension::pressure, 5 * kMmHg) / kMmHg;
    b.initial_pressure_mmHg = c.quantity("initial_pressure", Dimension::pressure, 0.0) / kMmHg;
    b.filling_ramp_ms = c.quantity("filling_ramp", Dimension::time, 100.0, Range::positive());
    b.first_onset_ms = first_onset;
    b.period_ms = period;
    b.convergence_tolerance = c.number("convergence_tolerance", 0.01, Range::open(0, 1));
    const Node w = c.child("windkessel");
    auto& wk = cav.windkessel;
    wk.elements = static_cast<int>(w.integer("elements", 3, 2, 3));
    wk.peripheral_resistance =
        w.quantity("peripheral_resistance", Dimension::resistance, std::nullopt, Range::positive()) / kPerMl;
    wk.compliance = w.quantity("compliance", Dimension::compliance, std::nullopt, Range::positive()) / kMlPerMmHg;
    wk.characteristic_impedance = wk.elements == 3 ? w.quantity("characteristic_impedance", Dimension::resistance,
                                                                std::nullopt, Range::non_negative()) /
                                                         kPerMl
                                                   : 0.0;
    if (wk.elements == 2) w.reject_if_present("characteristic_impedance", "used with elements: 3 only");
    wk.venous_pressure = w.quantity("venous_pressure", Dimension::pressure, 0.0, Range::non_negative()) / kMmHg;
    wk.initial_pressure =
        w.quantity("initial_pressure", Dimension::pressure, 80 * kMmHg, Range::non_negative()) / kMmHg;
    try {  // messages name the real keys: circulation.cavities[i].<key>, ....windkessel.<key>
      b.validate(c.path());
      wk.validate(c.key_path("windkessel"));
    } catch (const Error& e) {
      CARDIO_FAIL(c.where() << ": " << e.what());
    }
    out.push_back(cav);
  }
  if (out.empty()) n.fail("cavities", "the beat needs at least one cavity with its circulation");
  return out;
}

/// A chamber's keys (contraction_onset: after the ventricles' onset).
void parse_chamber(const Node& n, ChamberParams& c) {
  c.active_elastance_mmHg_per_mL =
      n.quantity("active_elastance", Dimension::elastance, c.active_elastance_mmHg_per_mL * kPerMl, Range::positive()) /
      kPerMl;
  c.passive_elastance_mmHg_per_mL = n.quantity("passive_elastance", Dimension::elastance,
                                               c.passive_elastance_mmHg_per_mL * kPerMl, Range::positive()) /
                                    kPerMl;
  c.rest_volume_mL = n.quantity("rest_volume", Dimension::volume, c.rest_volume_mL * 1e3, Range::non_negative()) / 1e3;
  c.contraction_onset_ms =
      n.quantity("contraction_onset", Dimension::time, c.contraction_onset_ms, Range::non_negative());
  c.contraction_ms = n.quantity("contraction", Dimension::time, c.contraction_ms, Range::positive());
  c.relaxation_ms = n.quantity("relaxation", Dimension::time, c.relaxation_ms, Range::positive());
}

void parse_vessel(const Node& n, VesselParams& v) {
  v.resistance_mmHg_ms_per_mL =
      n.quantity("resistance", Dimension::resistance, v.resistance_mmHg_ms_per_mL * kPerMl, Range::positive()) / kPerMl;
  v.compliance_mL_per_mmHg =
      n.quantity("compliance", Dimension::compliance, v.compliance_mL_per_mmHg * kMlPerMmHg, Range::positive()) /
      kMlPerMmHg;
  v.inductance_mmHg_ms2_per_mL =
      n.quantity("inductance", Dimension::inertance, v.inductance_mmHg_ms2_per_mL * kPerMl, Range::non_negative()) /
      kPerMl;
}

/// The initial state: atrial and 0-D ventricle volumes, vessel pressures (Regazzoni et al.'s by default).
circulation::ClosedLoopState parse_initial_state(const Node& n, const ClosedLoopParams& p) {
  using circulation::compartment_name;
  circulation::ClosedLoopState s = circulation::ClosedLoopState::regazzoni2022(p);
  for (Compartment c : {Compartment::left_atrium, Compartment::right_atrium, Compartment::left_ventricle,
                        Compartment::right_ventricle}) {
    double& v = s.volume_mL[std::size_t(c)];
    v = n.quantity(std::string(compartment_name(c)), Dimension::volume, v * 1e3, Range::non_negative()) / 1e3;
  }
  const std::array<std::pair<Compartment, const VesselParams*>, 4> vessels{
      {{Compartment::systemic_arteries, &p.systemic_arteries},
       {Compartment::systemic_veins, &p.systemic_veins},
       {Compartment::pulmonary_arteries, &p.pulmonary_arteries},
       {Compartment::pulmonary_veins, &p.pulmonary_veins}}};
  for (const auto& [c, vessel] : vessels) {
    // The paper's state gives the vessels' pressures (V = C p); they stay the config's quantity.
    const double p0 = s.volume_mL[std::size_t(c)] / vessel->compliance_mL_per_mmHg;
    s.volume_mL[std::size_t(c)] =
        vessel->compliance_mL_per_mmHg *
        n.quantity(std::string(compartment_name(c)), Dimension::pressure, p0 * kMmHg, Range::non_negative()) / kMmHg;
  }
  return s;
}

/// Loop time of a chamber's contraction onset given after the ventricles' onset (the loop runs on
/// the beat's clock: the ventricles contract at first_onset + k period).
void to_loop_time(ChamberParams& c, double first_onset, double period) {
  c.contraction_onset_ms = std::fmod(first_onset + c.contraction_onset_ms, period);
}

/// circulation.closed_loop.afterload: the aortic pressures the systemic arteries are calibrated to.
circulation::AfterloadTarget parse_afterload(const Node& a) {
  circulation::AfterloadTarget t;
  t.systolic_mmHg =
      a.quantity("aortic_systolic_pressure", Dimension::pressure, std::nullopt, Range::open(0, 300 * kMmHg)) / kMmHg;
  t.diastolic_mmHg =
      a.quantity("aortic_diastolic_pressure", Dimension::pressure, std::nullopt, Range::open(0, 300 * kMmHg)) / kMmHg;
  t.tolerance_mmHg = a.quantity("tolerance", Dimension::pressure, 3 * kMmHg, Range::open(0, 20 * kMmHg)) / kMmHg;
  if (!(t.diastolic_mmHg < t.systolic_mmHg))
    CARDIO_FAIL(a.where() << ": " << a.path() << ".aortic_diastolic_pressure (" << t.diastolic_mmHg
                          << " mmHg) must be below aortic_systolic_pressure (" << t.systolic_mmHg << " mmHg)");
  return t;
}

circulation::ClosedLoopCirculation parse_closed_loop(const Node& n, double first_onset, double period) {
  circulation::ClosedLoopCirculation loop;
  const Node cav = n.child("cavities");
  loop.left_ventricle = cav.text("left_ventricle", std::nullopt);
  loop.right_ventricle = cav.text("right_ventricle", std::string());
  ClosedLoopParams& p = loop.params;
  p = ClosedLoopParams::regazzoni2022(period);
  // The reference code's onsets are in loop time with the ventricles at 0: after the ventricles' onset.
  const std::array<std::pair<const char*, ChamberParams*>, 4> chambers{{{"left_atrium", &p.left_atrium},
                                                                        {"right_atrium", &p.right_atrium},
                                                                        {"left_ventricle", &p.left_ventricle},
                                                                        {"right_ventricle", &p.right_ventricle}}};
  for (const auto& [key, chamber] : chambers) {
    parse_chamber(n.child_or_empty(key), *chamber);
    if (!(chamber->contraction_onset_ms < period))
      n.child_or_empty(key).fail("contraction_onset", "expected a time in [0, simulation.period)");
    to_loop_time(*chamber, first_onset, period);
  }
  const Node valves = n.child_or_empty("valves");
  p.valves.open_resistance_mmHg_ms_per_mL =
      valves.quantity("open_resistance", Dimension::resistance, p.valves.open_resistance_mmHg_ms_per_mL * kPerMl,
                      Range::positive()) /
      kPerMl;
  p.valves.closed_resistance_mmHg_ms_per_mL =
      valves.quantity("closed_resistance", Dimension::resistance, p.valves.closed_resistance_mmHg_ms_per_mL * kPerMl,
                      Range::positive()) /
      kPerMl;
  for (const auto& [key, vessel] :
       std::array<std::pair<const char*, VesselParams*>, 4>{{{"systemic_arteries", &p.systemic_arteries},
                                                             {"systemic_veins", &p.systemic_veins},
                                                             {"pulmonary_arteries", &p.pulmonary_arteries},
                                                             {"pulmonary_veins", &p.pulmonary_veins}}})
    parse_vessel(n.child_or_empty(key), *vessel);
  try {
    p.validate(n.path());
  } catch (const Error& e) {
    CARDIO_FAIL(n.where() << ": " << e.what());
  }
  loop.initial = parse_initial_state(n.child_or_empty("initial"), p);
  if (n.has("fill")) {
    const Node f = n.child("fill");
    circulation::FillTarget t;
    t.lv_end_diastolic_pressure_mmHg =
        f.quantity("lv_end_diastolic_pressure", Dimension::pressure, std::nullopt, Range::open(0, 40 * kMmHg)) / kMmHg;
    t.tolerance_mmHg = f.quantity("tolerance", Dimension::pressure, 0.5 * kMmHg, Range::open(0, 10 * kMmHg)) / kMmHg;
    loop.fill = t;
  }
  if (n.has("afterload")) loop.afterload = parse_afterload(n.child("afterload"));
  return loop;
}

}  // namespace

CirculationConfig parse_circulation(const Node& n, double first_onset, double period) {
  CirculationConfig out;
  if (!n.has("closed_loop")) {
    out.cavities = parse_windkessel_cavities(n, first_onset, period);
    return out;
  }
  n.reject_if_present("cavities", "give either cavities (each in its own Windkessel) or closed_loop");
  const Node loop_node = n.child("closed_loop");
  out.closed_loop = parse_closed_loop(loop_node, first_onset, period);
  circulation::BeatParams beat;
  beat.first_onset_ms = first_onset;
  beat.period_ms = period;
  beat.convergence_tolerance = loop_node.number("convergence_tolerance", 0.01, Range::open(0, 1));
  // The cavities' Windkessels are not used in the loop; the systemic arteries stand in (valid values).
  circulation::WindkesselParams unused;
  unused.elements = 2;
  unused.peripheral_resistance = out.closed_loop->params.systemic_arteries.resistance_mmHg_ms_per_mL;
  unused.compliance = out.closed_loop->params.systemic_arteries.compliance_mL_per_mmHg;
  unused.characteristic_impedance = 0;
  for (const std::string& name : {out.closed_loop->left_ventricle, out.closed_loop->right_ventricle})
    if (!name.empty()) out.cavities.push_back({name, beat, unused});
  return out;
}

}  // namespace cardio::pipeline
