#include "app/block_app.hpp"

#include "blocks/experiments.hpp"
#include "cardio/core/parallel.hpp"
#include "cardio/io/json.hpp"
#include "cardio/io/vtu.hpp"
#include "common/exit_codes.hpp"

namespace cardio::app {

BlockRun::BlockRun(const Args& args, config::Document& doc)
    : m_args(args), m_cfg(pipeline::parse_run_config(doc)), m_resolved(doc.resolved_yaml()) {}

int BlockRun::run(Stage& stage) {
  if (m_args.threads > 0) set_thread_count(m_args.threads);
  RunDir dir = RunDir::create(m_args, m_cfg.name, m_resolved, {"summary.json", "final.vtu"});
  const std::filesystem::path& out = dir.path();
  std::ostream& log = dir.log().out();
  log << "cardiac " << CARDIO_VERSION << ": run " << m_args.config << " -> " << out.string() << "\n";
  try {
    stage.what = "running the block experiment of " + std::to_string(m_cfg.block.nx) + " x " +
                 std::to_string(m_cfg.block.ny) + " x " + std::to_string(m_cfg.block.nz) + " voxels";
    pipeline::ExperimentResult r = pipeline::run_experiment(m_cfg, &log);
    dir.stamp(r.summary);  // the provenance of a heart run: version, config, its hash, threads, time
    if (m_cfg.write_vtu) io::write_vtu(out / "final.vtu", r.mesh, r.state.x, {{"velocity", r.state.v}});
    io::write_json(out / "summary.json", r.summary);
    log << "measured: " << r.summary["measured"].dump() << "\n";
    log << "wrote " << (out / "summary.json").string() << "\n";
  } catch (const std::bad_alloc&) {
    throw;  // main reports what was being built
  } catch (const std::length_error&) {
    throw;
  } catch (const std::exception& e) {
    dir.log().error("cardiac: run failed: " + pipeline::describe(e) + "\n");
    return pipeline::kExitFailed;
  }
  return pipeline::kExitOk;
}

}  // namespace cardio::app
