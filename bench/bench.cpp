#include "bench.hpp"

#include <malloc.h>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cardio/core/error.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/io/json.hpp"
#include "cardio/mechanics/baudet_cube.hpp"
#include "cardio/mechanics/block.hpp"
#include "cardio/mechanics/bourguignon_cani.hpp"
#include "cardio/mechanics/integrators.hpp"
#include "cardio/mechanics/myocardium.hpp"

namespace cardio::bench {
namespace mech = cardio::mechanics;
using Clock = std::chrono::steady_clock;

namespace {

// Bytes the process holds from malloc (all arenas, mmapped blocks included; glibc mallinfo2).
// Unlike the resident set, it falls when a case frees its model, so each case's growth is its own.
double allocated_bytes() {
  const struct mallinfo2 mi = mallinfo2();
  return double(mi.uordblks) + double(mi.hblkhd);
}

// STREAM-style triad a = b + s c over arrays far larger than the caches [GB/s].
double triad_bandwidth() {
  const std::int64_t n = 20'000'000;
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  parallel_for(n, [&](std::int64_t i) { a[i] = 0; });
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = Clock::now();
    parallel_for(n, [&](std::int64_t i) { a[i] = b[i] + 3.0 * c[i]; });
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 3.0 * 8.0 * n / dt / 1e9);
  }
  return best + 0 * a[n / 2];
}

// The arithmetic each row times: hearts beat in single precision by default.
mech::Precision bench_precision(const std::string& element) {
  return element == "heart" ? mech::Precision::single_precision : mech::Precision::double_precision;
}

// The internal forces of one element type on `mesh` (the active tension is an input: active_inputs).
std::unique_ptr<mech::InternalForces> make_forces(const std::string& element, const std::string& isa,
                                                  const mech::HexMesh& mesh) {
  if (element == "bourguignon_cani") {
    mech::BCCalibration cal;
    cal.damping_time = 0.01;
    return std::make_unique<mech::BourguignonCaniForces>(
        mesh, std::vector<mech::BCModuli>{
                  mech::calibrate_bourguignon_cani(mech::ElasticConstants::isotropic(10, 0.45), cal)});
  }
  if (element == "baudet")
    return std::make_unique<mech::BaudetCubeForces>(
        mesh, std::vector<mech::BaudetConstants>{mech::calibrate_baudet(10, 0.45, 1.0, 0.01)});
  // "heart": the law as a beat runs it (pipeline/config/heart_config.cpp): no viscous stress (the
  // beat damps through the integrator, mass-proportionally), no active-strain option, and single
  // precision (simulation.precision); the active tension is on. The other Guccione rows switch
  // both on and compute in double, so every term of the kernel is timed.
  mech::GuccioneLaw law;
  if (element != "heart") {
    law.damping_time = 0.01;
    law.active.beta = 0.1;
  }
  const auto kind = element == "one_point" ? mech::ElementKind::one_point : mech::ElementKind::sampled_axes;
  auto forces =
      std::make_unique<mech::GuccioneForces>(mesh, std::vector<mech::GuccioneLaw>{law}, kind, bench_precision(element));
  if (!isa.empty()) forces->use_simd_isa(isa);
  return forces;
}

// One block of about `target` elements of one element type, timed at every thread count.
void bench_case(const std::string& element, const std::string& isa, long target, const BenchOptions& o,
                std::ostream& out, nlohmann::json& results) {
  const int n = std::max(1, static_cast<int>(std::lround(std::cbrt(static_cast<double>(target)))));
  const double bytes0 = allocated_bytes();
  mech::FibreField ff;
  ff.kind = mech::FibreField::Kind::random;
  const mech::HexMesh mesh = mech::make_block({n, n, n, 1.0, Eigen::Vector3d::Zero()}, ff);
  auto model = make_forces(element, isa, mesh);
  const auto* guccione = dynamic_cast<const mech::GuccioneForces*>(model.get());
  const std::string simd = guccione ? std::string(guccione->simd_isa()) : "";
  mech::MassSpringSystem sys(mesh, std::move(model), mech::lumped_masses(mesh, {1.06}));
  // Every term on: active tension and activation on every element (the passive elements ignore them).
  const std::vector<double> Ta(std::size_t(mesh.n_elements()), 60.0), activation(Ta.size(), 0.5);
  const mech::ForceInputs in{1.0, Ta, activation, bench_precision(element)};
  const std::string precision = in.precision == mech::Precision::single_precision ? "single" : "double";
  mech::NodeState s = sys.rest_state(0);
  // A small random perturbation so no spring sits exactly at rest.
  for (Eigen::Index i = 0; i < s.x.cols(); ++i)
    s.x.col(i) += 1e-3 * Eigen::Vector3d(std::sin(1.0 * i), std::cos(2.0 * i), std::sin(3.0 * i));
  const double bytes_per_element = (allocated_bytes() - bytes0) / static_cast<double>(mesh.n_elements());
  const double dt = 1e-4;
  auto forces = [&](const Eigen::Matrix3Xd& x, const Eigen::Matrix3Xd& v, double, Eigen::Matrix3Xd& f) {
    sys.forces(x, v, in, f);
  };
  for (int t : o.threads) {
    set_thread_count(t);
    mech::NodeState w = s;
    sys.forces(w.x, w.v, in, w.f);
    mech::step(mech::Scheme::verlet, w, 0, dt, forces, nullptr);  // warm-up
    long steps = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    while (elapsed < o.seconds || steps < 3) {
      mech::step(mech::Scheme::verlet, w, 0, dt, forces, nullptr);
      ++steps;
      elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    const double ups = static_cast<double>(mesh.n_elements()) * steps / elapsed;
    out << std::setw(24) << element << std::setw(10) << mesh.n_elements() << std::setw(9) << t << std::setw(12) << steps
        << std::setw(14) << std::setprecision(1) << 1e9 / ups << std::setw(16) << std::setprecision(2) << ups / 1e6
        << std::setw(14) << std::setprecision(0) << bytes_per_element << std::setw(10) << simd << std::setw(11)
        << precision << "\n";
    results.push_back({{"element", element},
                       {"heart_default", element == "heart"},
                       {"elements", mesh.n_elements()},
                       {"nodes", mesh.n_nodes()},
                       {"threads", t},
                       {"steps", steps},
                       {"seconds", elapsed},
                       {"element_updates_per_second", ups},
                       {"ns_per_element_update", 1e9 / ups},
                       {"bytes_per_element", bytes_per_element},
                       {"simd_isa", simd},
                       {"precision", precision}});
  }
}

}  // namespace

const std::vector<std::string>& bench_elements() {
  static const std::vector<std::string> names{"heart", "sampled_axes", "one_point", "bourguignon_cani", "baudet"};
  return names;
}

std::string bench_element(const std::string& name) {
  for (const std::string& e : bench_elements())
    if (e == name) return e;
  return "";
}

void run_bench(const BenchOptions& o, std::ostream& out) {
  for (const std::string& e : o.elements)
    CARDIO_CHECK(!bench_element(e).empty(), "bench: unknown element type '" << e << "'");
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json bandwidth = nlohmann::json::object();
  for (int t : o.threads) {
    set_thread_count(t);
    bandwidth[std::to_string(t)] = triad_bandwidth();
    out << "memory bandwidth (triad), " << t << " thread(s): " << std::fixed << std::setprecision(1)
        << bandwidth[std::to_string(t)].get<double>() << " GB/s\n";
  }
  out << "\n"
      << std::setw(24) << "element" << std::setw(10) << "elements" << std::setw(9) << "threads" << std::setw(12)
      << "steps" << std::setw(14) << "ns/element" << std::setw(16) << "Mupdates/s" << std::setw(14) << "bytes/elem"
      << std::setw(10) << "simd" << std::setw(11) << "precision"
      << "\n";
  for (const std::string& name : o.elements) {
    const std::string element = bench_element(name);
    std::vector<std::string> isas{""};  // the widest build
    const bool sampled_axes = element == "heart" || element == "sampled_axes";
    if (sampled_axes && o.all_isas) isas = mech::runnable_simd_isas();
    for (const std::string& isa : isas)
      for (long target : o.sizes) bench_case(element, isa, target, o, out, results);
  }
  if (!o.json_path.empty()) {
    nlohmann::json doc{{"benchmark", "element_step"},
                       {"description",
                        "force evaluation of every element (random frames; Guccione with Ta 60 kPa, activation 0.5; "
                        "heart: the sampled-axes element with the law as beats run it, no viscous term and no "
                        "active strain; the other elements with every term on, damping included) + velocity-Verlet "
                        "update"},
                       {"heart_element", "sampled_axes"},
                       {"memory_bandwidth_GBps", bandwidth},
                       {"results", results}};
    io::write_json(o.json_path, doc);
    out << "wrote " << o.json_path << "\n";
  }
}

}  // namespace cardio::bench
