#pragma once
/// @file clinical_ranges.hpp
/// The normal adult ranges a beat's summary is compared with (summary.json clinical_comparison,
/// docs/analysis.md "Clinical comparison"): the one table of them in the code. The bounds are the
/// acceptance ranges of issue 16 (what the project asserts for its human default case); each
/// source names where the figure comes from, and "approx." marks a commonly quoted physiological
/// range rather than one study's table (../shared/notes/clinical-reference.md).
#include <array>
#include <string_view>

namespace cardio::pipeline {

struct ClinicalRange {
  std::string_view key;       ///< what the value is (the quantity's id in the code)
  std::string_view quantity;  ///< as written in summary.json and the figure
  std::string_view unit;
  double lo, hi;  ///< the normal range, lo <= hi
  std::string_view source;
};

inline constexpr std::array<ClinicalRange, 11> kClinicalRanges{{
    // Chamber quantification guideline: 2-D echo 62-150 mL (men), 46-106 mL (women); CMR reads higher.
    {"lv_edv", "LV end-diastolic volume", "mL", 100, 160,
     "Lang et al. 2015, J Am Soc Echocardiogr 28:1 (echo 62-150 mL men, 46-106 mL women; CMR about 110-180 mL)"},
    // Same guideline: 52-72 % (men), 54-74 % (women).
    {"lv_ef", "LV ejection fraction", "%", 50, 70,
     "Lang et al. 2015, J Am Soc Echocardiogr 28:1 (52-72 % men, 54-74 % women)"},
    // No single study: the textbook systolic arterial pressure of a healthy adult.
    {"lv_peak_pressure", "LV peak pressure", "mmHg", 105, 140, "approx. physiological range (about 110-130 mmHg)"},
    {"aortic_diastolic_pressure", "aortic diastolic pressure", "mmHg", 60, 90,
     "approx. physiological range (about 70-85 mmHg)"},
    {"rv_peak_pressure", "RV peak pressure", "mmHg", 18, 35, "approx. physiological range (about 15-30 mmHg)"},
    {"rv_ef", "RV ejection fraction", "%", 40, 65, "approx. physiological range (about 45-65 %)"},
    // Meta-analysis of 2 597 healthy subjects (speckle-tracking echo, engineering strain vs ED).
    {"gls", "global longitudinal strain (GLS)", "%", -24, -15,
     "Yingchoncharoen et al. 2013, J Am Soc Echocardiogr 26:185 (mean -19.7 %, study means -15.9 to -22.1 %)"},
    {"gcs", "global circumferential strain (GCS)", "%", -30, -18,
     "Yingchoncharoen et al. 2013, J Am Soc Echocardiogr 26:185 (mean -23.3 %, 95 % CI -24.6 to -22.1 %)"},
    {"grs", "global radial strain (GRS)", "%", 25, 60,
     "Yingchoncharoen et al. 2013, J Am Soc Echocardiogr 26:185 (mean +47.3 %, study means 35-59 %)"},
    // CMR: thickening increases towards the apex (absolute 4.3 / 4.4 / 3.2 mm base / mid / apex).
    {"wall_thickening", "systolic wall thickening", "%", 30, 100,
     "Ubachs et al. 2009, J Cardiovasc Magn Reson (roughly +50 to +100 %)"},
    // Not asserted by issue 16; the range commonly quoted for tagged MR and speckle tracking.
    {"lv_twist", "LV twist", "deg", 10, 20, "approx. adult range (about 10-20 deg)"},
}};

}  // namespace cardio::pipeline
