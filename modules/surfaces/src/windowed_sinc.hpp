#pragma once
// Internal: the one setting of VTK's windowed-sinc filter that every smoothed surface uses.
class vtkWindowedSincPolyDataFilter;

namespace cardio::surfaces {

/// kSmoothingIterations and kSmoothingPassBand (smoothing.hpp), coordinates normalised, boundary
/// and feature edges kept, non-manifold points smoothed.
void configure_windowed_sinc(vtkWindowedSincPolyDataFilter& smooth);

}  // namespace cardio::surfaces
