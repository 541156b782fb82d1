// The closed loop's blood volume found for a target LV end-diastolic pressure (blood_fill.hpp), on
// the 0-D model of Regazzoni et al. 2022: blood added raises every vessel's pressure by the same
// amount (V = C p), the calibrated loop's own periodic state fills the LV to the target, and the
// blood volume less what was added is conserved.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cardio/circulation/blood_fill.hpp"
#include "cardio/circulation/closed_loop.hpp"
#include "cardio/circulation/closed_loop_beats.hpp"
#include "cardio/core/error.hpp"

namespace cardio::circulation {
namespace {

constexpr std::array<Compartment, 4> kVessels{Compartment::systemic_arteries, Compartment::systemic_veins,
                                              Compartment::pulmonary_arteries, Compartment::pulmonary_veins};

ClosedLoop paper_model() {
  const ClosedLoopParams p = ClosedLoopParams::regazzoni2022();
  return ClosedLoop(p, ClosedLoopState::regazzoni2022(p));
}

/// The LV pressure at the onset of the 0-D LV's contraction (loop time k T_HB): its EDP.
double lv_edp(const ClosedLoop& m) { return m.pressure_mmHg(Compartment::left_ventricle); }

TEST(BloodFill, AddedBloodRaisesEveryVesselPressureAlike) {
  ClosedLoop m = paper_model();
  const ClosedLoopParams& p = m.params();
  const double sum_c = p.systemic_arteries.compliance_mL_per_mmHg + p.systemic_veins.compliance_mL_per_mmHg +
                       p.pulmonary_arteries.compliance_mL_per_mmHg + p.pulmonary_veins.compliance_mL_per_mmHg;
  EXPECT_DOUBLE_EQ(m.vessel_compliance_mL_per_mmHg(), sum_c);  // 1.2 + 60 + 10 + 16 mL/mmHg
  std::array<double, 4> before{};
  for (std::size_t i = 0; i < 4; ++i) before[i] = m.pressure_mmHg(kVessels[i]);
  const double chambers = m.volume_mL(Compartment::left_atrium) + m.volume_mL(Compartment::left_ventricle);
  const double total = m.total_volume_mL();
  m.add_to_vessels(174.4);  // 2 mmHg over 87.2 mL/mmHg
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(m.pressure_mmHg(kVessels[i]), before[i] + 2.0, 1e-12);
  EXPECT_NEAR(m.total_volume_mL(), total + 174.4, 1e-9);
  EXPECT_EQ(m.volume_mL(Compartment::left_atrium) + m.volume_mL(Compartment::left_ventricle), chambers);
  // Taking more than the vessels hold is refused, naming the vessel, and changes nothing.
  try {
    m.add_to_vessels(-1e4);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("would leave the systemic_arteries"), std::string::npos) << e.what();
  }
  EXPECT_NEAR(m.total_volume_mL(), total + 174.4, 1e-9);
}

TEST(BloodFill, TheCalibratedLoopFillsTheLvToTheTarget) {
  ClosedLoop free = paper_model();
  run_until_periodic(free, 1.0, 1e-4, 100);
  const double edp0 = lv_edp(free);
  std::printf("paper model: periodic LV EDP %.2f mmHg\n", edp0);
  for (const double target : {edp0 + 4.0, edp0 - 3.0}) {
    ClosedLoop m = paper_model();
    BloodFill fill({target, 0.25}, m.vessel_compliance_mL_per_mmHg());
    const double blood0 = m.total_volume_mL();
    // As a beating heart with simulation.stop_when_periodic: beat after beat until the EDP is within
    // the tolerance at an onset and the EDVs changed by less than 1 % in the beat before.
    int beat = 1;
    double edv_change = 1;
    for (double last_edv = 0; beat <= 30; ++beat) {
      m.add_to_vessels(fill.next(beat, lv_edp(m)));
      if (fill.reached() && edv_change < 0.01) break;
      const ClosedLoopBeat b = run_beat(m, 1.0, beat);
      edv_change = std::abs(b.lv_edv_mL - last_edv) / b.lv_edv_mL;
      last_edv = b.lv_edv_mL;
    }
    ASSERT_TRUE(fill.reached()) << "target " << target << " mmHg, last EDP " << fill.history().back().second;
    EXPECT_LE(beat, 15) << "target " << target;
    EXPECT_NEAR(m.total_volume_mL() - fill.added_mL(), blood0, 1e-12 * blood0);
    EXPECT_EQ(fill.added_mL() > 0, target > edp0);
    // The loop left to itself (no more blood added) settles where the LV fills to the target.
    run_until_periodic(m, 1.0, 1e-4, 100);
    EXPECT_NEAR(lv_edp(m), target, 0.5) << "periodic EDP after the fill";
    for (const auto& [b, e] : fill.history()) std::printf(" %d:%.2f", b, e);
    std::printf("target %.2f mmHg: reached at beat %d with %+.1f mL; periodic EDP %.2f mmHg\n", target, beat,
                fill.added_mL(), lv_edp(m));
  }
}

TEST(BloodFill, TheFirstOnsetIsNotMeasured) {
  BloodFill fill({8.0, 0.5}, 87.2);
  EXPECT_EQ(fill.next(1, 2.0), 0.0);
  EXPECT_TRUE(fill.history().empty());
  EXPECT_FALSE(fill.reached());
  EXPECT_NEAR(fill.next(2, 5.0), 3.0 * 87.2, 1e-12);
  EXPECT_NEAR(fill.next(3, 30.0), -10.0 * 87.2, 1e-12);  // at most 10 mmHg a beat
  const double corrected = fill.next(4, 8.4);            // within the tolerance: reached, and still corrected
  EXPECT_TRUE(fill.reached());
  EXPECT_LT(corrected, 0.0);
  EXPECT_THROW(fill.next(5, std::nan("")), Error);
}

TEST(BloodFill, ACheckpointContinuesTheSameSteps) {
  const std::vector<double> edps{3.0, 4.1, 5.6, 6.9, 7.4, 8.3};
  BloodFill straight({8.0, 0.5}, 87.2), first({8.0, 0.5}, 87.2);
  std::vector<double> expected;
  for (std::size_t k = 0; k < edps.size(); ++k) expected.push_back(straight.next(int(k) + 2, edps[k]));
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(first.next(int(k) + 2, edps[k]), expected[k]);
  BinaryWriter w;
  first.save(w);
  BloodFill resumed({8.0, 0.5}, 87.2);
  BinaryReader r(w.bytes(), "test checkpoint");
  resumed.restore(r);
  for (std::size_t k = 3; k < edps.size(); ++k) EXPECT_EQ(resumed.next(int(k) + 2, edps[k]), expected[k]) << k;
  EXPECT_EQ(resumed.added_mL(), straight.added_mL());
}

}  // namespace
}  // namespace cardio::circulation
