// The OTLP side of tracing without a server: spans in OTLP/HTTP's JSON encoding (ids in hex, times and integers as
// decimal strings, enums as integers, defaults left out), --otlp-endpoint's parsing, and the exporter against a
// loopback collector: batching, a full queue dropping (and counting) spans, failures counted and not fatal, and
// everything queued sent at stop().
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/otlp_collector.hpp"
#include "serve/otlp_exporter.hpp"
#include "serve/otlp_json.hpp"
#include "testing/status_matchers.hpp"

namespace accel::serve {
namespace {

using accel::testing::attribute;
using accel::testing::OtlpCollector;
using nlohmann::json;

SpanRecord span_named(std::string name, std::uint8_t seed = 1) {
  SpanRecord span;
  span.trace_id.fill(seed);
  span.span_id.fill(static_cast<std::uint8_t>(seed + 1));
  span.name = std::move(name);
  span.start_unix_nanos = 1'700'000'000'000'000'001;
  span.end_unix_nanos = 1'700'000'000'123'456'789;
  return span;
}

TEST(OtlpJson, ASpanIsWrittenAsTheOtlpJsonMappingSays) {
  SpanRecord server = span_named("POST /embed", 0xab);
  server.kind = SpanKind::server;
  server.parent_span_id = {0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7};
  server.error = true;
  server.attributes = {{"http.route", std::string("/embed")},
                       {"http.response.status_code", std::int64_t{503}},
                       {"ratio", 0.5},
                       {"cached", true}};
  const SpanRecord child = span_named("queue", 0xab);
  const std::vector<SpanRecord> spans{server, child};
  const json body = json::parse(otlp_json(spans, "my-service"));

  ASSERT_EQ(body["resourceSpans"].size(), 1u);
  const json& resource = body["resourceSpans"][0];
  EXPECT_EQ(resource["resource"]["attributes"],
            json::parse(R"([{"key": "service.name", "value": {"stringValue": "my-service"}}])"));
  ASSERT_EQ(resource["scopeSpans"].size(), 1u);
  EXPECT_EQ(resource["scopeSpans"][0]["scope"]["name"], "accel.serve");
  const json& written = resource["scopeSpans"][0]["spans"];
  ASSERT_EQ(written.size(), 2u);
  const json& first = written[0];
  EXPECT_EQ(first["traceId"], "abababababababababababababababab");
  EXPECT_EQ(first["spanId"], "acacacacacacacac");
  EXPECT_EQ(first["parentSpanId"], "00f067aa0ba902b7");
  EXPECT_EQ(first["name"], "POST /embed");
  EXPECT_EQ(first["kind"], 2);
  EXPECT_EQ(first["startTimeUnixNano"], "1700000000000000001");
  EXPECT_EQ(first["endTimeUnixNano"], "1700000000123456789");
  EXPECT_EQ(first["status"], json::parse(R"({"code": 2})"));
  EXPECT_EQ(attribute(first, "http.route"), json::parse(R"({"stringValue": "/embed"})"));
  EXPECT_EQ(attribute(first, "http.response.status_code"), json::parse(R"({"intValue": "503"})"));
  EXPECT_EQ(attribute(first, "ratio"), json::parse(R"({"doubleValue": 0.5})"));
  EXPECT_EQ(attribute(first, "cached"), json::parse(R"({"boolValue": true})"));
  // A root span has no parentSpanId, a span without attributes no attributes, an unset status an empty one.
  const json& second = written[1];
  EXPECT_FALSE(second.contains("parentSpanId")) << second;
  EXPECT_FALSE(second.contains("attributes")) << second;
  EXPECT_EQ(second["status"], json::object());
  EXPECT_EQ(second["kind"], 1);
}

TEST(OtlpJson, TextThatIsNotUtf8DoesNotMakeTheBatchUnwritable) {
  const std::vector<SpanRecord> spans{span_named("bad \xff name")};
  const json body = json::parse(otlp_json(spans, "svc"), nullptr, false);
  ASSERT_FALSE(body.is_discarded());
  EXPECT_TRUE(body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"].is_string());
}

TEST(OtlpEndpoint, AnHttpUrlGivesHostPortAndTheTracesPath) {
  Result<OtlpEndpoint> plain = parse_otlp_endpoint("http://collector:4318");
  ASSERT_THAT(plain, accel::testing::IsOk());
  EXPECT_EQ(plain->host, "collector");
  EXPECT_EQ(plain->port, 4318);
  EXPECT_EQ(plain->path, "/v1/traces");
  Result<OtlpEndpoint> defaulted = parse_otlp_endpoint("http://10.0.0.7/otel/");
  ASSERT_THAT(defaulted, accel::testing::IsOk());
  EXPECT_EQ(defaulted->host, "10.0.0.7");
  EXPECT_EQ(defaulted->port, 4318);
  EXPECT_EQ(defaulted->path, "/otel/v1/traces");
  Result<OtlpEndpoint> v6 = parse_otlp_endpoint("http://[::1]:9999");
  ASSERT_THAT(v6, accel::testing::IsOk());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9999);
}

TEST(OtlpEndpoint, WhatIsNotAnHttpEndpointIsRefusedNamingTheOption) {
  for (const char* url :
       {"collector:4318", "https://collector:4318", "http://", "http://:4318", "http://host:0", "http://host:65536",
        "http://host:43x8", "http://host:", "http://host/a?b=c", "http://user:pw@host", "http://[::1"}) {
    Result<OtlpEndpoint> endpoint = parse_otlp_endpoint(url);
    ASSERT_THAT(endpoint, accel::testing::StatusIs(Code::invalid_argument)) << url;
    EXPECT_NE(endpoint.status().message().find("--otlp-endpoint"), std::string::npos) << url;
  }
}

TEST(OtlpExporter, SpansAreBatchedToTheCollectorAndAllSentAtStop) {
  OtlpCollector collector;
  Result<std::unique_ptr<OtlpExporter>> exporter = OtlpExporter::start({.otlp_endpoint = collector.endpoint(),
                                                                        .service_name = "svc",
                                                                        .max_batch_spans = 3,
                                                                        .export_interval = std::chrono::hours(1)});
  ASSERT_THAT(exporter, accel::testing::IsOk());
  for (int i = 0; i < 7; ++i) (*exporter)->submit({span_named("s" + std::to_string(i))});
  // Two full batches go without waiting for the interval; the seventh span waits for stop().
  ASSERT_TRUE(collector.wait_for_posts(2));
  (*exporter)->stop();
  const std::vector<json> bodies = collector.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(collector.spans().size(), 7u);
  EXPECT_EQ(bodies[0]["resourceSpans"][0]["scopeSpans"][0]["spans"].size(), 3u);
  for (const std::string& type : collector.content_types()) EXPECT_EQ(type, "application/json");
  const ExportCounts counts = (*exporter)->counts();
  EXPECT_EQ(counts.exported, 7u);
  EXPECT_EQ(counts.dropped, 0u);
  EXPECT_EQ(counts.failed, 0u);
  // After stop, spans are dropped and counted.
  (*exporter)->submit({span_named("late"), span_named("later")});
  EXPECT_EQ((*exporter)->counts().dropped, 2u);
}

TEST(OtlpExporter, AFullQueueDropsARequestsSpansAndCountsThem) {
  OtlpCollector collector;
  collector.hold();
  Result<std::unique_ptr<OtlpExporter>> exporter = OtlpExporter::start({.otlp_endpoint = collector.endpoint(),
                                                                        .max_queue_spans = 4,
                                                                        .max_batch_spans = 1,
                                                                        .export_interval = std::chrono::hours(1)});
  ASSERT_THAT(exporter, accel::testing::IsOk());
  // The first span's POST is held in the collector: the exporter's thread waits there, and the queue fills.
  (*exporter)->submit({span_named("first")});
  ASSERT_TRUE(collector.wait_for_posts(1));
  (*exporter)->submit({span_named("a"), span_named("b"), span_named("c")});
  (*exporter)->submit({span_named("d"), span_named("e")});  // 3 + 2 > 4: both dropped, not one of them
  (*exporter)->submit({span_named("f")});                   // fits
  (*exporter)->submit({span_named("g")});                   // does not
  EXPECT_EQ((*exporter)->counts().dropped, 3u);
  collector.release();
  (*exporter)->stop();
  std::vector<std::string> names;
  for (const json& span : collector.spans()) names.push_back(span["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"first", "a", "b", "c", "f"}));
  EXPECT_EQ((*exporter)->counts().exported, 5u);
}

TEST(OtlpExporter, ExportFailuresAreCountedAndTheExporterGoesOn) {
  OtlpCollector collector;
  collector.answer(503);
  Result<std::unique_ptr<OtlpExporter>> exporter = OtlpExporter::start(
      {.otlp_endpoint = collector.endpoint(), .max_batch_spans = 2, .export_interval = std::chrono::hours(1)});
  ASSERT_THAT(exporter, accel::testing::IsOk());
  (*exporter)->submit({span_named("a"), span_named("b")});
  ASSERT_TRUE(collector.wait_for_posts(1));
  collector.answer(200);
  (*exporter)->submit({span_named("c"), span_named("d")});
  ASSERT_TRUE(collector.wait_for_posts(2));
  (*exporter)->stop();
  const ExportCounts counts = (*exporter)->counts();
  EXPECT_EQ(counts.failed, 2u);
  EXPECT_EQ(counts.failed_batches, 1u);
  EXPECT_EQ(counts.exported, 2u);
}

TEST(OtlpExporter, ACollectorThatIsNotThereCostsOneFailureAtStop) {
  int port = 0;
  {
    OtlpCollector gone;  // a port that was just free, and nobody listens on now
    port = gone.port();
  }
  Result<std::unique_ptr<OtlpExporter>> exporter =
      OtlpExporter::start({.otlp_endpoint = "http://127.0.0.1:" + std::to_string(port),
                           .max_batch_spans = 2,
                           .export_interval = std::chrono::hours(1),
                           .export_timeout = std::chrono::milliseconds(500)});
  ASSERT_THAT(exporter, accel::testing::IsOk());
  (*exporter)->submit({span_named("a")});
  (*exporter)->submit({span_named("b")});
  (*exporter)->submit({span_named("c")});
  (*exporter)->stop();
  const ExportCounts counts = (*exporter)->counts();
  EXPECT_EQ(counts.exported, 0u);
  EXPECT_EQ(counts.failed, 3u);
  EXPECT_EQ(counts.dropped, 0u);
}

}  // namespace
}  // namespace accel::serve
