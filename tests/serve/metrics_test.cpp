#include "serve/metrics.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace accel::serve {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream lines(text);
  for (std::string each; std::getline(lines, each);)
    if (each == line) return true;
  return false;
}

TEST(Histogram, BucketsAreCumulativeAndABoundValueFallsInItsBucket) {
  Histogram histogram({1, 2, 4});
  for (double value : {0.5, 1.0, 1.5, 4.0, 9.0}) histogram.observe(value);
  std::string out;
  histogram.write(out, "x", "stage=\"queue\"");
  EXPECT_EQ(out,
            "x_bucket{stage=\"queue\",le=\"1\"} 2\n"
            "x_bucket{stage=\"queue\",le=\"2\"} 3\n"
            "x_bucket{stage=\"queue\",le=\"4\"} 4\n"
            "x_bucket{stage=\"queue\",le=\"+Inf\"} 5\n"
            "x_sum{stage=\"queue\"} 16\n"
            "x_count{stage=\"queue\"} 5\n");
  std::string bare;
  Histogram({1}).write(bare, "y", "");
  EXPECT_EQ(bare, "y_bucket{le=\"1\"} 0\ny_bucket{le=\"+Inf\"} 0\ny_sum 0\ny_count 0\n");
}

TEST(Metrics, RendersRequestsBatchesStagesQueueAndTheModelsCaches) {
  Metrics metrics;
  metrics.count_request("/v1/embeddings", 200);
  metrics.count_request("/v1/embeddings", 200);
  metrics.count_request("/embed", 429);
  metrics.count_inputs(3, 40);
  metrics.observe_batch(2, 3, 40);
  metrics.observe_stage(Stage::compute, 0.002);
  metrics.observe_request(0.003);
  embed::ModelStats model{.runs = 5, .sequences = 9, .tokens = 100, .padded_tokens = 28};
  model.caches.push_back({.name = "bert-graphs", .hits = 4, .misses = 1, .entries = 1, .builds = 1});
  const std::string text = metrics.render({.requests = 7, .tokens = 70, .batches_in_flight = 1}, true, model);

  EXPECT_TRUE(has_line(text, "accel_serve_requests_total{endpoint=\"/v1/embeddings\",status=\"200\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "accel_serve_requests_total{endpoint=\"/embed\",status=\"429\"} 1"));
  EXPECT_TRUE(has_line(text, "# TYPE accel_serve_requests_total counter"));
  EXPECT_TRUE(has_line(text, "accel_serve_tokens_total 40"));
  EXPECT_TRUE(has_line(text, "accel_serve_inputs_total 3"));
  EXPECT_TRUE(has_line(text, "accel_serve_ready 1"));
  EXPECT_TRUE(has_line(text, "accel_serve_queue_requests 7"));
  EXPECT_TRUE(has_line(text, "accel_serve_queue_tokens 70"));
  EXPECT_TRUE(has_line(text, "accel_serve_batches_in_flight 1"));
  EXPECT_TRUE(has_line(text, "# TYPE accel_serve_batch_tokens histogram"));
  EXPECT_TRUE(has_line(text, "accel_serve_batch_tokens_bucket{le=\"64\"} 1"));
  EXPECT_TRUE(has_line(text, "accel_serve_batch_sequences_count 1"));
  EXPECT_TRUE(has_line(text, "accel_serve_stage_seconds_count{stage=\"compute\"} 1"));
  EXPECT_TRUE(has_line(text, "accel_serve_stage_seconds_count{stage=\"queue\"} 0"));
  EXPECT_TRUE(has_line(text, "accel_serve_request_seconds_count 1"));
  EXPECT_TRUE(has_line(text, "accel_model_runs_total 5"));
  EXPECT_TRUE(has_line(text, "accel_model_padded_tokens_total 28"));
  EXPECT_TRUE(has_line(text, "accel_model_compiles_total{cache=\"bert-graphs\"} 1"));
  EXPECT_TRUE(has_line(text, "accel_model_cache_hits_total{cache=\"bert-graphs\"} 4"));
  // Every sample line names a metric announced by a TYPE line before it.
  std::istringstream lines(text);
  std::string typed;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      typed = line.substr(7, line.find(' ', 7) - 7);
    } else if (line[0] != '#') {
      EXPECT_EQ(line.rfind(typed, 0), 0u) << line << " after TYPE " << typed;
    }
  }
}

TEST(Metrics, RequestCountsCarryTheModelThatAnsweredThem) {
  Metrics metrics;
  metrics.count_request("/v1/embeddings", 200, "minilm");
  metrics.count_request("/v1/embeddings", 200, "minilm");
  metrics.count_request("/v1/embeddings", 200, "bge");
  metrics.count_request("/v1/embeddings", 400);  // no model chosen (an unknown name)
  metrics.count_request("/rerank", 413, "reranker\"x");
  const std::string text = render_metrics(metrics, {});
  EXPECT_TRUE(
      has_line(text, "accel_serve_requests_total{model=\"minilm\",endpoint=\"/v1/embeddings\",status=\"200\"} 2"))
      << text;
  EXPECT_TRUE(has_line(text, "accel_serve_requests_total{model=\"bge\",endpoint=\"/v1/embeddings\",status=\"200\"} 1"));
  EXPECT_TRUE(has_line(text, "accel_serve_requests_total{endpoint=\"/v1/embeddings\",status=\"400\"} 1"));
  EXPECT_TRUE(
      has_line(text, "accel_serve_requests_total{model=\"reranker\\\"x\",endpoint=\"/rerank\",status=\"413\"} 1"));
}

TEST(Metrics, LeavesTheModelOutBeforeItIsLoaded) {
  const std::string text = Metrics().render({}, false, std::nullopt);
  EXPECT_TRUE(has_line(text, "accel_serve_ready 0"));
  EXPECT_EQ(text.find("accel_model_"), std::string::npos);
}

}  // namespace
}  // namespace accel::serve
