#include "web/api/response.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"
#include "web/api/json_values.h"

namespace gpumon::web::api {
namespace {

using testing::Encode;
using testing::Str;

TEST(ResponseTest, SuccessEnvelopeOmitsEmptyAnnotations) {
  ApiResponse r = ApiResponse::Success([](JsonWriter& w) {
    w.StartArray();
    w.String("a");
    return w.EndArray();
  });
  EXPECT_EQ(r.HttpStatus(), 200);
  EXPECT_EQ(EncodeToString(r), R"({"status":"success","data":["a"]})");
}

// A matrix's points are written in bulk, past rapidjson; the envelope
// around them must stay well-formed, with Prometheus's point format.
TEST(ResponseTest, MatrixPointsInPrometheusFormat) {
  promql::Matrix m(2);
  m[0].metric = Labels{{"a", "1"}};
  m[0].points = {{1500, 1.25}, {2000, -0.0}, {-1, std::nan("")}};
  m[1].metric = Labels{{"a", "2"}};
  m[1].points = {{1750, 2}, {2500, 3}};  // off and on the first series' grid
  promql::Matrix empty(1);
  empty[0].metric = Labels{{"a", "3"}};
  m.push_back(empty[0]);
  ApiResponse r =
      ApiResponse::Success([m](JsonWriter& w) { return WriteQueryData(w, promql::Value(m)); });
  r.warnings.push_back("w");
  EXPECT_EQ(EncodeToString(r),
            R"({"status":"success","data":{"resultType":"matrix","result":[)"
            R"({"metric":{"a":"1"},"values":[[1.500,"1.25"],[2,"-0"],[-0.001,"NaN"]]},)"
            R"({"metric":{"a":"2"},"values":[[1.750,"2"],[2.500,"3"]]},)"
            R"({"metric":{"a":"3"},"values":[]}]},"warnings":["w"]})");
}

TEST(ResponseTest, WarningsAndInfosAreCapped) {
  ApiResponse r = ApiResponse::Success([](JsonWriter& w) { return w.Null(); });
  // Appended rather than "w" + to_string(i): g++ 12 at -O3 reports a
  // spurious -Wrestrict on that operator+.
  for (int i = 0; i < 12; ++i) r.warnings.push_back(std::string("w").append(std::to_string(i)));
  r.infos.push_back("PromQL info: something");
  auto d = Encode(r);
  ASSERT_TRUE(d.IsObject());
  ASSERT_TRUE(d["warnings"].IsArray());
  ASSERT_EQ(d["warnings"].Size(), 11u);
  EXPECT_EQ(Str(d["warnings"][9]), "w9");
  EXPECT_EQ(Str(d["warnings"][10]), "2 more warning annotations omitted");
  ASSERT_EQ(d["infos"].Size(), 1u);
  EXPECT_EQ(Str(d["infos"][0]), "PromQL info: something");
}

TEST(ResponseTest, ErrorEnvelopeAndStatusCodes) {
  ApiResponse r = ApiResponse::Failure({ErrorKind::kBadData, "bad \"thing\""});
  EXPECT_EQ(EncodeToString(r),
            R"({"status":"error","errorType":"bad_data","error":"bad \"thing\""})");
  EXPECT_EQ(r.HttpStatus(), 400);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kExecution, ""}).HttpStatus(), 422);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kTimeout, ""}).HttpStatus(), 503);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kUnavailable, ""}).HttpStatus(), 503);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kInternal, ""}).HttpStatus(), 500);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kCanceled, ""}).HttpStatus(), 499);
  EXPECT_EQ(ApiResponse::Failure({ErrorKind::kNotFound, ""}).HttpStatus(), 404);
}

TEST(ResponseTest, NoDataIsNoContent) { EXPECT_EQ(ApiResponse().HttpStatus(), 204); }

TEST(ResponseTest, EngineErrorKindsMap) {
  EXPECT_EQ(FromEngine(promql::ErrorType::kTimeout), ErrorKind::kTimeout);
  EXPECT_EQ(FromEngine(promql::ErrorType::kExecution), ErrorKind::kExecution);
  EXPECT_EQ(FromEngine(promql::ErrorType::kBadData), ErrorKind::kBadData);
  EXPECT_EQ(FromEngine(promql::ErrorType::kCanceled), ErrorKind::kCanceled);
  EXPECT_STREQ(ErrorKindName(ErrorKind::kExecution), "execution");
  EXPECT_STREQ(ErrorKindName(ErrorKind::kTimeout), "timeout");
}

TEST(ResponseTest, InvalidParamWording) {
  ApiError e = InvalidParam("time", "cannot parse \"x\" to a valid timestamp");
  EXPECT_EQ(e.kind, ErrorKind::kBadData);
  EXPECT_EQ(e.message, "invalid parameter \"time\": cannot parse \"x\" to a valid timestamp");
}

TEST(ChunkedOutputTest, DeliversInChunksAndStopsWhenReceiverIsGone) {
  std::vector<size_t> sizes;
  std::string all;
  ChunkedOutput out(
      [&](const char* d, size_t n) {
        sizes.push_back(n);
        all.append(d, n);
        return sizes.size() < 3;
      },
      100);
  for (int i = 0; i < 1000; ++i) out.Put('x');
  out.Flush();
  EXPECT_EQ(sizes.size(), 3u);  // the third write failed: nothing more sent
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(all.size(), 300u);
}

TEST(JsonValuesTest, VectorMatrixScalarString) {
  promql::Vector v{{Labels{{"__name__", "up"}, {"job", "a\"b"}}, 1500, 1},
                   {Labels{{"__name__", "up"}, {"job", "c"}}, 1500, std::nan("")}};
  ApiResponse r =
      ApiResponse::Success([v](JsonWriter& w) { return WriteQueryData(w, promql::Value(v)); });
  EXPECT_EQ(EncodeToString(r),
            R"({"status":"success","data":{"resultType":"vector","result":[)"
            R"({"metric":{"__name__":"up","job":"a\"b"},"value":[1.500,"1"]},)"
            R"({"metric":{"__name__":"up","job":"c"},"value":[1.500,"NaN"]}]}})");

  promql::Matrix m{{Labels{{"a", "1"}}, {{1000, 0.5}, {61000, 1e-9}}}};
  auto d = testing::Encode(
      ApiResponse::Success([m](JsonWriter& w) { return WriteQueryData(w, promql::Value(m)); }));
  ASSERT_TRUE(d.IsObject());
  EXPECT_EQ(Str(d["data"]["resultType"]), "matrix");
  const auto& values = d["data"]["result"][0]["values"];
  ASSERT_EQ(values.Size(), 2u);
  EXPECT_EQ(values[1][0].GetDouble(), 61.0);
  EXPECT_EQ(Str(values[1][1]), "1e-09");
  EXPECT_EQ(Str(d["data"]["result"][0]["metric"]["a"]), "1");

  auto s = testing::Encode(ApiResponse::Success([](JsonWriter& w) {
    return WriteQueryData(w, promql::Value(promql::Scalar{2000, 2}));
  }));
  EXPECT_EQ(Str(s["data"]["resultType"]), "scalar");
  EXPECT_EQ(s["data"]["result"][0].GetDouble(), 2.0);
  EXPECT_EQ(Str(s["data"]["result"][1]), "2");

  auto str = testing::Encode(ApiResponse::Success([](JsonWriter& w) {
    return WriteQueryData(w, promql::Value(promql::String{3000, "hello"}));
  }));
  EXPECT_EQ(Str(str["data"]["resultType"]), "string");
  EXPECT_EQ(Str(str["data"]["result"][1]), "hello");
}

TEST(JsonValuesTest, LabelsRoundTripWhateverTheyHold) {
  // Plain text takes a bulk path, text with characters JSON escapes the
  // writer's own: a JSON parser must read every one back unchanged.
  const std::vector<std::string> values = {
      "", "plain", "a\"b", "back\\slash", "tab\there", "nl\n", std::string("nul\0x", 5), "\x1f\x7f",
      "温度-ü-😀", "/slash/", "{\"json\":1}",
      // Escapes at word boundaries and in the tail.
      "0123456\"89", "01234567\\", "abcdefgh\x01ijklmnop",
      // Bytes that differ from '"' or '\\' only in the top bit.
      "\xdc\x90\xdc\x90\xc2\xa2\xc2\xa2\xdc\x90\xc2\xa2"};
  // Each value under a plain key, and under a key that needs escaping.
  const std::vector<std::string> keys = {"z", "z\"key"};
  promql::Vector v;
  for (size_t i = 0; i < values.size(); ++i) {
    for (const std::string& key : keys) {
      v.push_back({Labels{{"__name__", "m"}, {"i", std::to_string(i)}, {key, values[i]}}, 1000, 1});
    }
  }
  auto d = testing::Encode(
      ApiResponse::Success([v](JsonWriter& w) { return WriteQueryData(w, promql::Value(v)); }));
  ASSERT_TRUE(d.IsObject());
  const auto& result = d["data"]["result"];
  ASSERT_EQ(result.Size(), values.size() * keys.size());
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const auto& m = result[static_cast<rapidjson::SizeType>(i * keys.size() + k)]["metric"];
      ASSERT_EQ(m.MemberCount(), 3u) << i;
      EXPECT_EQ(Str(m["__name__"]), "m");
      EXPECT_EQ(Str(m["i"]), std::to_string(i));
      ASSERT_TRUE(m.HasMember(keys[k].c_str())) << i << " " << keys[k];
      const auto& got = m[keys[k].c_str()];
      EXPECT_EQ(std::string(got.GetString(), got.GetStringLength()), values[i]) << i;
    }
  }
  // A label set larger than any small buffer the encoder might format in.
  const Labels big{{"__name__", "m"}, {"long", std::string(5000, 'x')}, {"z", "end"}};
  auto b = testing::Encode(ApiResponse::Success([big](JsonWriter& w) {
    return WriteQueryData(w, promql::Value(promql::Vector{{big, 1000, 1}}));
  }));
  ASSERT_TRUE(b.IsObject());
  EXPECT_EQ(Str(b["data"]["result"][0]["metric"]["long"]), std::string(5000, 'x'));
  EXPECT_EQ(Str(b["data"]["result"][0]["metric"]["z"]), "end");
  // An empty label set is an empty object.
  auto e = testing::Encode(ApiResponse::Success([](JsonWriter& w) {
    return WriteQueryData(w, promql::Value(promql::Vector{{Labels{}, 1000, 1}}));
  }));
  ASSERT_TRUE(e.IsObject());
  EXPECT_TRUE(e["data"]["result"][0]["metric"].IsObject());
  EXPECT_EQ(e["data"]["result"][0]["metric"].MemberCount(), 0u);
}

TEST(JsonValuesTest, LimitKeepsFirstSeries) {
  promql::Vector v{{Labels{{"a", "1"}}, 0, 1}, {Labels{{"a", "2"}}, 0, 2}};
  auto d = testing::Encode(
      ApiResponse::Success([v](JsonWriter& w) { return WriteQueryData(w, promql::Value(v), 1); }));
  ASSERT_EQ(d["data"]["result"].Size(), 1u);
  EXPECT_EQ(Str(d["data"]["result"][0]["metric"]["a"]), "1");
}

}  // namespace
}  // namespace gpumon::web::api
