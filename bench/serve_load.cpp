// serve_load: a closed-loop HTTP load client for embedding servers (accel serve, or the peer in bench/peers/).
//
// N connections, each a thread with one kept-alive HTTP/1.1 connection, send requests back to back for a duration
// (after a warm-up that is not counted). Texts come from a generated trace: short queries (4 to 12 words) or
// passages (90 to 150 words, within a 256-token model's limit). Prints one JSON line: requests/s, tokens/s (from
// the OpenAI response's usage), latency percentiles and the responses by status; "lost" counts requests that got
// no HTTP response at all (connection refused or reset, timeout).
//
//   serve_load --port 8080 --connections 64 --workload short --duration 20
#include <fmt/format.h>
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int connections = 1;
  double duration_s = 10;
  double warmup_s = 2;
  std::string workload = "short";  // short | passages
  std::string api = "openai";      // openai | tei
  int inputs = 1;                  // texts per request
  std::uint64_t seed = 1;
};

// Common English words: what WordPiece keeps whole, so that a word is about one token.
constexpr const char* kWords[] = {
    "time",    "person", "year",   "way",     "day",    "thing",   "man",      "world",  "life",    "hand",
    "part",    "child",  "eye",    "woman",   "place",  "work",    "week",     "case",   "point",   "government",
    "company", "number", "group",  "problem", "fact",   "be",      "have",     "do",     "say",     "get",
    "make",    "go",     "know",   "take",    "see",    "come",    "think",    "look",   "want",    "give",
    "use",     "find",   "tell",   "ask",     "seem",   "feel",    "try",      "leave",  "call",    "good",
    "new",     "first",  "last",   "long",    "great",  "little",  "own",      "other",  "old",     "right",
    "big",     "high",   "small",  "large",   "next",   "early",   "young",    "public", "bad",     "same",
    "able",    "to",     "of",     "in",      "for",    "on",      "with",     "at",     "by",      "from",
    "up",      "about",  "into",   "over",    "after",  "the",     "and",      "a",      "that",    "it",
    "not",     "he",     "as",     "you",     "this",   "but",     "his",      "they",   "her",     "she",
    "or",      "an",     "will",   "my",      "one",    "all",     "would",    "there",  "their",   "what",
    "so",      "out",    "if",     "who",     "which",  "go",      "me",       "when",   "can",     "like",
    "water",   "city",   "market", "river",   "music",  "system",  "computer", "data",   "model",   "search",
    "server",  "memory", "energy", "history", "school", "student", "science",  "garden", "weather", "language"};

std::string make_text(std::mt19937_64& rng, int min_words, int max_words) {
  std::uniform_int_distribution<int> length(min_words, max_words);
  std::uniform_int_distribution<std::size_t> word(0, std::size(kWords) - 1);
  std::string text;
  for (int i = length(rng); i > 0; --i) {
    if (!text.empty()) text += ' ';
    text += kWords[word(rng)];
  }
  return text;
}

std::string json_string(const std::string& text) { return '"' + text + '"'; }  // the words need no escaping

// The body of one request of the workload.
std::string make_body(const LoadOptions& options, std::mt19937_64& rng) {
  const bool passages = options.workload == "passages";
  std::string inputs;
  for (int i = 0; i < options.inputs; ++i) {
    if (i > 0) inputs += ',';
    inputs += json_string(passages ? make_text(rng, 90, 150) : make_text(rng, 4, 12));
  }
  if (options.inputs > 1) inputs = '[' + inputs + ']';
  return options.api == "tei" ? fmt::format(R"({{"inputs":{}}})", inputs)
                              : fmt::format(R"({{"input":{},"model":"bench"}})", inputs);
}

// usage.prompt_tokens of an OpenAI response, found without parsing the embeddings.
std::uint64_t prompt_tokens(const std::string& body) {
  const std::size_t at = body.rfind("\"prompt_tokens\":");
  return at == std::string::npos ? 0 : std::strtoull(body.c_str() + at + 16, nullptr, 10);
}

struct ConnectionStats {
  std::vector<double> latencies_ms;
  std::map<int, std::uint64_t> statuses;  // -1: no response
  std::uint64_t tokens = 0;
};

void run_connection(const LoadOptions& options, int index, Clock::time_point measure_from, Clock::time_point until,
                    ConnectionStats& stats) {
  std::mt19937_64 rng(options.seed * 7919 + static_cast<std::uint64_t>(index));
  httplib::Client client(options.host, options.port);
  client.set_keep_alive(true);
  client.set_tcp_nodelay(
      true);  // headers and body are two writes: Nagle would hold the body for the delayed ACK (40 ms)
  client.set_read_timeout(60, 0);
  const char* path = options.api == "tei" ? "/embed" : "/v1/embeddings";
  for (Clock::time_point now = Clock::now(); now < until; now = Clock::now()) {
    const std::string body = make_body(options, rng);
    const Clock::time_point sent = Clock::now();
    httplib::Result result = client.Post(path, body, "application/json");
    const Clock::time_point received = Clock::now();
    // A refused connection fails at once: pause rather than spin while the server is away.
    if (!result) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (sent < measure_from) continue;
    const int status = result ? result->status : -1;
    ++stats.statuses[status];
    if (status == 200) {
      stats.latencies_ms.push_back(std::chrono::duration<double, std::milli>(received - sent).count());
      stats.tokens += prompt_tokens(result->body);
    }
  }
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto index = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  LoadOptions options;
  CLI::App app{"closed-loop HTTP load on an embedding server; prints one JSON line"};
  app.add_option("--host", options.host);
  app.add_option("--port", options.port);
  app.add_option("--connections", options.connections)->check(CLI::PositiveNumber);
  app.add_option("--duration", options.duration_s, "measured seconds")->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup_s, "seconds of load before measuring")->check(CLI::NonNegativeNumber);
  app.add_option("--workload", options.workload)->check(CLI::IsMember({"short", "passages"}));
  app.add_option("--api", options.api)->check(CLI::IsMember({"openai", "tei"}));
  app.add_option("--inputs", options.inputs, "texts per request")->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed);
  CLI11_PARSE(app, argc, argv);

  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const Clock::time_point measure_from = Clock::now() + seconds(options.warmup_s);
  const Clock::time_point until = measure_from + seconds(options.duration_s);
  std::vector<ConnectionStats> stats(static_cast<std::size_t>(options.connections));
  std::vector<std::thread> threads;
  for (int i = 0; i < options.connections; ++i)
    threads.emplace_back(run_connection, std::cref(options), i, measure_from, until, std::ref(stats[i]));
  for (std::thread& thread : threads) thread.join();

  std::vector<double> latencies;
  std::map<int, std::uint64_t> statuses;
  std::uint64_t tokens = 0;
  for (const ConnectionStats& connection : stats) {
    latencies.insert(latencies.end(), connection.latencies_ms.begin(), connection.latencies_ms.end());
    for (const auto& [status, count] : connection.statuses) statuses[status] += count;
    tokens += connection.tokens;
  }
  std::sort(latencies.begin(), latencies.end());
  std::string by_status;
  std::uint64_t lost = 0;
  for (const auto& [status, count] : statuses) {
    if (status < 0) {
      lost = count;
      continue;
    }
    by_status += fmt::format("{}\"{}\":{}", by_status.empty() ? "" : ",", status, count);
  }
  const double ok = static_cast<double>(latencies.size());
  fmt::print(
      "{{\"bench\":\"serve_load\",\"api\":\"{}\",\"workload\":\"{}\",\"inputs\":{},\"connections\":{},"
      "\"duration_s\":{},\"requests\":{},\"requests_per_s\":{:.1f},\"tokens_per_s\":{:.0f},\"p50_ms\":{:.3f},"
      "\"p90_ms\":{:.3f},\"p99_ms\":{:.3f},\"max_ms\":{:.3f},\"statuses\":{{{}}},\"lost\":{}}}\n",
      options.api, options.workload, options.inputs, options.connections, options.duration_s, ok,
      ok / options.duration_s, static_cast<double>(tokens) / options.duration_s, percentile(latencies, 50),
      percentile(latencies, 90), percentile(latencies, 99), latencies.empty() ? 0.0 : latencies.back(), by_status,
      lost);
  return 0;
}
