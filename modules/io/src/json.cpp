#include "cardio/io/json.hpp"

#include "cardio/core/atomic_file.hpp"

namespace cardio::io {

void write_json(const std::filesystem::path& file, const nlohmann::json& j) {
  write_file_atomic(file, j.dump(2) + "\n");
}

}  // namespace cardio::io
