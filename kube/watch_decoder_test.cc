#include "kube/watch_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::kube {
namespace {

using Type = WatchEvent::Type;

std::string Line(std::string_view type, std::string_view name, std::string_view rv) {
  return std::string(R"({"type":")") + std::string(type) +
         R"(","object":{"kind":"ConfigMap","metadata":{"name":")" + std::string(name) +
         R"(","resourceVersion":")" + std::string(rv) + "\"}}}\n";
}

std::string NameOf(const WatchEvent& e) { return e.object["metadata"]["name"].get<std::string>(); }

TEST(DecodeWatchLineTest, Table) {
  struct Case {
    std::string line;
    bool ok;
    Type type;
    std::string error_part;
  };
  const std::vector<Case> cases = {
      {R"({"type":"ADDED","object":{"a":1}})", true, Type::kAdded, ""},
      {R"({"type":"MODIFIED","object":{}})", true, Type::kModified, ""},
      {R"({"type":"DELETED","object":{}})", true, Type::kDeleted, ""},
      {R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})", true,
       Type::kBookmark, ""},
      {R"({"type":"ERROR","object":{"kind":"Status","code":410}})", true, Type::kError, ""},
      {R"({"type":"ADDED","object":{)", false, Type::kAdded, "not valid JSON"},
      {R"(["ADDED"])", false, Type::kAdded, "not a JSON object"},
      {R"({"object":{}})", false, Type::kAdded, "\"type\""},
      {R"({"type":7,"object":{}})", false, Type::kAdded, "\"type\""},
      {R"({"type":"RENAMED","object":{}})", false, Type::kAdded, "unknown type \"RENAMED\""},
      {R"({"type":"ADDED"})", false, Type::kAdded, "\"object\""},
      {R"({"type":"ADDED","object":"x"})", false, Type::kAdded, "\"object\""},
  };
  for (const auto& c : cases) {
    auto got = DecodeWatchLine(c.line);
    EXPECT_EQ(got.ok(), c.ok) << c.line << " -> " << got.status();
    if (c.ok && got.ok()) {
      EXPECT_EQ(got->type, c.type) << c.line;
      EXPECT_TRUE(got->object.is_object());
    }
    if (!c.ok && !got.ok()) {
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(got.status().message().find(c.error_part), std::string::npos)
          << got.status().message();
    }
  }
}

TEST(WatchDecoderTest, EveryChunkBoundaryGivesTheSameEvents) {
  const std::string stream = Line("ADDED", "a", "1") + Line("MODIFIED", "a", "2") +
                             "\r\n" +  // a blank line is ignored
                             Line("BOOKMARK", "", "3") + Line("DELETED", "a", "4");
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    WatchDecoder d;
    std::vector<WatchEvent> events;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      ASSERT_TRUE(d.Feed(std::string_view(stream).substr(i, chunk), &events).ok());
    }
    ASSERT_TRUE(d.Finish(&events).ok());
    ASSERT_EQ(events.size(), 4u) << "chunk size " << chunk;
    EXPECT_EQ(events[0].type, Type::kAdded);
    EXPECT_EQ(events[1].type, Type::kModified);
    EXPECT_EQ(events[2].type, Type::kBookmark);
    EXPECT_EQ(events[3].type, Type::kDeleted);
    EXPECT_EQ(events[3].object["metadata"]["resourceVersion"], "4");
    EXPECT_EQ(d.buffered(), 0u);
  }
}

TEST(WatchDecoderTest, KeepsTrailingPartialLineUntilCompleted) {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  const std::string line = Line("ADDED", "x", "7");
  ASSERT_TRUE(d.Feed(line + line.substr(0, 10), &events).ok());
  EXPECT_EQ(events.size(), 1u);
  EXPECT_EQ(d.buffered(), 10u);
  ASSERT_TRUE(d.Feed(line.substr(10), &events).ok());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(NameOf(events[1]), "x");
}

TEST(WatchDecoderTest, FinishDecodesLastLineWithoutNewline) {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  std::string line = Line("ADDED", "tail", "1");
  line.pop_back();
  ASSERT_TRUE(d.Feed(line, &events).ok());
  EXPECT_TRUE(events.empty());
  ASSERT_TRUE(d.Finish(&events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(NameOf(events[0]), "tail");
}

TEST(WatchDecoderTest, MalformedLineIsNamedAndOthersStillDecode) {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  const std::string stream =
      Line("ADDED", "a", "1") + "this is not json\n" + Line("ADDED", "b", "2");
  Status s = d.Feed(stream, &events);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("line 2"), std::string::npos) << s;
  EXPECT_NE(s.message().find("this is not json"), std::string::npos) << s;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(NameOf(events[1]), "b");
  // The decoder continues with the following chunks.
  EXPECT_TRUE(d.Feed(Line("DELETED", "b", "3"), &events).ok());
  EXPECT_EQ(events.size(), 3u);
}

TEST(WatchDecoderTest, LongMalformedLineIsShortenedInTheMessage) {
  WatchDecoder d;
  std::vector<WatchEvent> events;
  Status s = d.Feed(std::string(5000, 'x') + "\n", &events);
  EXPECT_FALSE(s.ok());
  EXPECT_LT(s.message().size(), 400u);
}

TEST(WatchErrorToStatusTest, Table) {
  struct Case {
    Json status;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {Json{{"code", 410}, {"reason", "Expired"}, {"message", "too old resource version"}},
       StatusCode::kGone},
      {Json{{"reason", "Gone"}}, StatusCode::kGone},
      {Json{{"code", 500}, {"message", "internal"}}, StatusCode::kUnavailable},
      {Json{{"code", 504}, {"reason", "Timeout"}}, StatusCode::kUnavailable},
      {Json{{"code", 403}, {"reason", "Forbidden"}}, StatusCode::kUnknown},
      {Json("not an object"), StatusCode::kUnknown},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(WatchErrorToStatus(c.status).code(), c.code) << c.status.dump();
  }
  EXPECT_EQ(WatchErrorToStatus(cases[0].status).message(), "too old resource version");
}

}  // namespace
}  // namespace kc::kube
