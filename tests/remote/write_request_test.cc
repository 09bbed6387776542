// The remote-write 1.0 body codec: golden bytes built by hand from the
// protobuf and snappy specifications, round trips, and every rejection.
#include "remote/write_request.h"

#include <gtest/gtest.h>
#include <snappy.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "proto/remote.pb.h"

namespace gpumon::remote {
namespace {

// --- Protobuf wire encoding, written from the spec (not via our encoder) ---

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Key(int field, int wire_type) { return Varint((uint64_t(field) << 3) | wire_type); }
std::string Bytes(int field, std::string_view payload) {
  return Key(field, 2) + Varint(payload.size()) + std::string(payload);
}
std::string Double(int field, double v) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  std::string out = Key(field, 1);
  for (int i = 0; i < 8; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
  return out;
}
std::string Int64(int field, int64_t v) { return Key(field, 0) + Varint(static_cast<uint64_t>(v)); }

std::string LabelMsg(std::string_view name, std::string_view value) {
  return Bytes(1, name) + Bytes(2, value);
}
std::string SampleMsg(double v, int64_t t) { return Double(1, v) + Int64(2, t); }

// A snappy block holding `raw` as literals only (format_description.txt):
// varint length, then literal elements of at most 60 bytes each, whose tag
// byte is (len-1) << 2.
std::string SnappyLiterals(std::string_view raw) {
  std::string out = Varint(raw.size());
  for (size_t i = 0; i < raw.size(); i += 60) {
    std::string_view chunk = raw.substr(i, 60);
    out += static_cast<char>((chunk.size() - 1) << 2);
    out += chunk;
  }
  return out;
}

std::string Compress(std::string_view raw) {
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}
std::string Uncompress(std::string_view body) {
  std::string out;
  EXPECT_TRUE(snappy::Uncompress(body.data(), body.size(), &out));
  return out;
}

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

std::string DecodeError(std::string_view body) {
  auto r = DecodeWriteRequest(body);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

// {__name__="up", job="a"} 1 @1000, byte by byte:
//   WriteRequest.timeseries (1, LEN 40)
//     TimeSeries.labels (1, LEN 14): name (1, LEN 8) "__name__", value (2, LEN 2) "up"
//     TimeSeries.labels (1, LEN 8):  name (1, LEN 3) "job", value (2, LEN 1) "a"
//     TimeSeries.samples (2, LEN 12): value (1, I64) 1.0, timestamp (2, VARINT) 1000
const std::string kGolden = std::string(
    "\x0a\x28"
    "\x0a\x0e\x0a\x08__name__\x12\x02up"
    "\x0a\x08\x0a\x03job\x12\x01\x61"
    "\x12\x0c\x09\x00\x00\x00\x00\x00\x00\xf0\x3f\x10\xe8\x07",
    42);

TEST(WriteRequestTest, EncodesGoldenBytes) {
  TimeSeries s{Labels{{"job", "a"}, {"__name__", "up"}}, {{1000, 1.0}}};
  std::string body = EncodeWriteRequest({&s, 1});
  EXPECT_EQ(Uncompress(body), kGolden);
}

TEST(WriteRequestTest, DecodesGoldenBytes) {
  auto r = DecodeWriteRequest(SnappyLiterals(kGolden));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].labels, (Labels{{"__name__", "up"}, {"job", "a"}}));
  ASSERT_EQ((*r)[0].samples.size(), 1u);
  EXPECT_EQ((*r)[0].samples[0].t, 1000);
  EXPECT_EQ((*r)[0].samples[0].v, 1.0);
}

TEST(WriteRequestTest, DecodesNegativeTimestampAndDefaults) {
  // int64 -1 is a 10-byte varint; a Sample with no fields is {0, 0}.
  std::string ts =
      Bytes(1, LabelMsg("__name__", "m")) + Bytes(2, SampleMsg(-2.5, -1)) + Bytes(2, "");
  ASSERT_EQ(Int64(2, -1).size(), 11u);
  auto r = DecodeWriteRequest(SnappyLiterals(Bytes(1, ts)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)[0].samples.size(), 2u);
  EXPECT_EQ((*r)[0].samples[0].t, -1);
  EXPECT_EQ((*r)[0].samples[0].v, -2.5);
  EXPECT_EQ((*r)[0].samples[1].t, 0);
  EXPECT_EQ(Bits((*r)[0].samples[1].v), 0u);
}

TEST(WriteRequestTest, RoundTripIsBitExact) {
  const double specials[] = {tsdb::StaleNaN(),
                             std::numeric_limits<double>::quiet_NaN(),
                             std::bit_cast<double>(uint64_t{0x7ff8dead0000beefULL}),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             -0.0,
                             0.0,
                             std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::max(),
                             -1e-300};
  std::vector<TimeSeries> in;
  for (int i = 0; i < 40; ++i) {
    TimeSeries s;
    s.labels = Labels{{"__name__", "gpu_metric_" + std::to_string(i % 4)},
                      {"gpu", std::to_string(i)},
                      {"host", "node-\xc3\xa9\xf0\x9f\x98\x80"},
                      {"zone", std::string(300, 'z')}};
    for (int j = 0; j < 2000; ++j) {
      double v = (j % 50 == 0) ? specials[(j / 50) % std::size(specials)] : j * 0.1 + i;
      s.samples.push_back({int64_t{1700000000000} + j * 15000 - (i == 0 ? 1800000000000 : 0), v});
    }
    in.push_back(std::move(s));
  }
  auto out = DecodeWriteRequest(EncodeWriteRequest(in));
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ((*out)[i].labels, in[i].labels);
    ASSERT_EQ((*out)[i].samples.size(), in[i].samples.size());
    for (size_t j = 0; j < in[i].samples.size(); ++j) {
      ASSERT_EQ((*out)[i].samples[j].t, in[i].samples[j].t) << i << "/" << j;
      ASSERT_EQ(Bits((*out)[i].samples[j].v), Bits(in[i].samples[j].v)) << i << "/" << j;
    }
  }
  EXPECT_TRUE(tsdb::IsStaleNaN((*out)[0].samples[0].v));
}

TEST(WriteRequestTest, EmptyRequestRoundTrips) {
  std::string body = EncodeWriteRequest({});
  EXPECT_EQ(Uncompress(body), "");
  auto r = DecodeWriteRequest(body);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->empty());
}

TEST(WriteRequestTest, SeriesWithoutSamplesAndWithoutMetricName) {
  std::string ts = Bytes(1, LabelMsg("job", "x"));
  auto r = DecodeWriteRequest(Compress(Bytes(1, ts)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].labels, (Labels{{"job", "x"}}));
  EXPECT_TRUE((*r)[0].samples.empty());
}

TEST(WriteRequestTest, SkipsUnknownFieldsAtEveryLevel) {
  std::string label = LabelMsg("__name__", "m") + Int64(3, 7);
  std::string sample = SampleMsg(4.5, 99) + Key(5, 5) + std::string("\x01\x02\x03\x04", 4);
  std::string ts = Bytes(1, label) + Bytes(7, "junk") + Bytes(2, sample);
  std::string req = Int64(9, 12345) + Bytes(1, ts) + Bytes(2, "cortex source field");
  auto r = DecodeWriteRequest(Compress(req));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].labels, (Labels{{"__name__", "m"}}));
  ASSERT_EQ((*r)[0].samples.size(), 1u);
  EXPECT_EQ((*r)[0].samples[0].t, 99);
  EXPECT_EQ((*r)[0].samples[0].v, 4.5);
}

TEST(WriteRequestTest, SkipsUnknownGroups) {
  // Field 9 as a (deprecated) group holding a varint and a nested group.
  std::string group = Key(9, 3) + Int64(1, 5) + Key(2, 3) + Key(2, 4) + Key(9, 4);
  std::string ts = Bytes(1, LabelMsg("__name__", "m")) + group + Bytes(2, SampleMsg(1, 2));
  auto r = DecodeWriteRequest(Compress(group + Bytes(1, ts)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)[0].samples.size(), 1u);
  // An end tag for another field, an unterminated group, a stray end tag.
  for (std::string bad : {Key(9, 3) + Key(8, 4), Key(9, 3) + Int64(1, 5), Key(9, 4)}) {
    std::string err = DecodeError(Compress(Bytes(1, ts) + bad));
    EXPECT_NE(err.find("protobuf: malformed WriteRequest field"), std::string::npos) << err;
  }
}

TEST(WriteRequestTest, RejectsFieldZeroAndOverlongVarints) {
  std::string ts = Bytes(1, LabelMsg("__name__", "m"));
  EXPECT_NE(DecodeError(Compress(Bytes(1, ts) + Key(0, 0) + Varint(1))).find("protobuf"),
            std::string::npos);
  // 11-byte varint.
  std::string sample = Key(2, 0) + std::string(10, '\x80') + std::string(1, '\x01');
  std::string err = DecodeError(Compress(Bytes(1, ts + Bytes(2, sample))));
  EXPECT_NE(err.find("protobuf: malformed timeseries[0].samples"), std::string::npos) << err;
  // A 10-byte varint is fine: -1.
  sample = Key(2, 0) + Varint(static_cast<uint64_t>(-1));
  auto r = DecodeWriteRequest(Compress(Bytes(1, ts + Bytes(2, sample))));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].samples[0].t, -1);
}

TEST(WriteRequestTest, IgnoresMetadataAndExemplars) {
  prometheus::WriteRequest req;
  auto* md = req.add_metadata();
  md->set_type(prometheus::MetricMetadata::COUNTER);
  md->set_metric_family_name("requests_total");
  md->set_help("Requests.");
  auto* ts = req.add_timeseries();
  auto* l = ts->add_labels();
  l->set_name("__name__");
  l->set_value("requests_total");
  auto* s = ts->add_samples();
  s->set_value(3);
  s->set_timestamp(5);
  auto* ex = ts->add_exemplars();
  ex->set_value(0.25);
  ex->set_timestamp(5);
  auto* el = ex->add_labels();
  el->set_name("trace_id");
  el->set_value("abc");
  auto r = DecodeWriteRequest(Compress(req.SerializeAsString()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  ASSERT_EQ((*r)[0].samples.size(), 1u);
  EXPECT_EQ((*r)[0].samples[0].v, 3);
}

TEST(WriteRequestTest, DropsLabelsWithEmptyValue) {
  std::string ts = Bytes(1, LabelMsg("__name__", "m")) + Bytes(1, LabelMsg("a", "")) +
                   Bytes(1, LabelMsg("b", "1"));
  auto r = DecodeWriteRequest(Compress(Bytes(1, ts)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].labels, (Labels{{"__name__", "m"}, {"b", "1"}}));
}

TEST(WriteRequestTest, RejectsCorruptSnappy) {
  EXPECT_NE(DecodeError("").find("snappy"), std::string::npos);
  EXPECT_NE(DecodeError(std::string("\xff\xff\xff\xff\xff\xff", 6)).find("snappy"),
            std::string::npos);
  std::string body = Compress(kGolden);
  EXPECT_NE(DecodeError(body.substr(0, body.size() - 3)).find("snappy"), std::string::npos);
  // A literal tag promising more bytes than follow.
  EXPECT_NE(DecodeError(std::string("\x05\x10\x61", 3)).find("snappy"), std::string::npos);
}

TEST(WriteRequestTest, RejectsImpossibleDeclaredLength) {
  // Declares 4 GiB - 1 in 8 bytes; must fail without allocating it.
  std::string body = Varint(0xFFFFFFFFu) + std::string("\x00\x61\x62", 3);
  std::string err = DecodeError(body);
  EXPECT_NE(err.find("snappy: corrupt input"), std::string::npos) << err;
  EXPECT_NE(err.find("4294967295"), std::string::npos) << err;
}

TEST(WriteRequestTest, RejectsInvalidProtobuf) {
  // A length-delimited field running past the end of the message.
  std::string err = DecodeError(Compress(Key(1, 2) + Varint(50) + "short"));
  EXPECT_NE(err.find("protobuf"), std::string::npos) << err;
  // Wire type 7 does not exist.
  err = DecodeError(Compress(Key(1, 7)));
  EXPECT_NE(err.find("protobuf"), std::string::npos) << err;
  // A varint cut off inside a Sample.
  std::string ts = Bytes(1, LabelMsg("__name__", "m")) + Bytes(2, Key(2, 0) + "\x80");
  err = DecodeError(Compress(Bytes(1, ts)));
  EXPECT_NE(err.find("protobuf"), std::string::npos) << err;
}

TEST(WriteRequestTest, RejectsEmptyLabelName) {
  std::string ok = Bytes(1, Bytes(1, LabelMsg("__name__", "m")));
  std::string bad = Bytes(1, Bytes(1, LabelMsg("", "v")) + Bytes(1, LabelMsg("a", "b")));
  std::string err = DecodeError(Compress(ok + ok + ok + bad));
  EXPECT_NE(err.find("timeseries[3]"), std::string::npos) << err;
  EXPECT_NE(err.find("label name \"\" is empty"), std::string::npos) << err;
}

TEST(WriteRequestTest, RejectsUnsortedLabels) {
  std::string ts = Bytes(1, LabelMsg("job", "a")) + Bytes(1, LabelMsg("__name__", "m"));
  std::string err = DecodeError(Compress(Bytes(1, ts)));
  EXPECT_NE(err.find("timeseries[0]: labels not sorted"), std::string::npos) << err;
}

TEST(WriteRequestTest, RejectsDuplicateLabelNames) {
  std::string ts = Bytes(1, LabelMsg("__name__", "m")) + Bytes(1, LabelMsg("job", "a")) +
                   Bytes(1, LabelMsg("job", "b"));
  std::string err = DecodeError(Compress(Bytes(1, ts)));
  EXPECT_NE(err.find("duplicate label name \"job\""), std::string::npos) << err;
}

TEST(WriteRequestTest, RejectsSeriesWithoutLabels) {
  std::string err = DecodeError(Compress(Bytes(1, Bytes(2, SampleMsg(1, 1)))));
  EXPECT_NE(err.find("timeseries[0]: no labels"), std::string::npos) << err;
}

TEST(WriteRequestTest, ChecksUtf8OfNamesAndValues) {
  auto with_label = [](std::string name, std::string value) {
    return Compress(Bytes(1, Bytes(1, LabelMsg(name, value))));
  };
  // Overlong '/', a lone surrogate, a truncated sequence, a stray continuation.
  for (std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\x80", "\xf4\x90\x80\x80"}) {
    std::string err = DecodeError(with_label("a" + bad, "v"));
    EXPECT_NE(err.find("is not valid UTF-8"), std::string::npos) << err;
    err = DecodeError(with_label("a", "v" + bad));
    EXPECT_NE(err.find("value that is not valid UTF-8"), std::string::npos) << err;
  }
  // Two-, three- and four-byte characters are fine in both.
  auto r = DecodeWriteRequest(with_label("\xc3\xa9t\xe2\x82\xac", "\xf0\x9f\x98\x80"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)[0].labels.Get("\xc3\xa9t\xe2\x82\xac"), "\xf0\x9f\x98\x80");
}

TEST(WriteRequestTest, RejectsNativeHistograms) {
  prometheus::WriteRequest req;
  auto* ts = req.add_timeseries();
  auto* l = ts->add_labels();
  l->set_name("__name__");
  l->set_value("rpc_duration_seconds");
  auto* h = ts->add_histograms();
  h->set_count_int(4);
  h->set_schema(3);
  h->set_timestamp(1000);
  std::string err = DecodeError(Compress(req.SerializeAsString()));
  EXPECT_EQ(err, "timeseries[0]: native histograms are not supported");
  // Presence alone counts: an empty Histogram message (field 4, length 0).
  err = DecodeError(Compress(Bytes(1, Bytes(1, LabelMsg("__name__", "m")) + Bytes(4, ""))));
  EXPECT_NE(err.find("native histograms are not supported"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpumon::remote
