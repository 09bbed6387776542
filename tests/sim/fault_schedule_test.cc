#include "sim/fault_schedule.h"

#include <gtest/gtest.h>

namespace gpumon::sim {
namespace {

TEST(FaultScheduleTest, EmptyIsNoFaults) {
  Result<std::vector<Fault>> f = ParseFaultSchedule("", 8);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->empty());
  f = ParseFaultSchedule(" ; ", 8);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->empty());
}

TEST(FaultScheduleTest, ParsesAndSortsByTime) {
  Result<std::vector<Fault>> f =
      ParseFaultSchedule("xid:gpu=2:code=79:at=5s;lost:gpu=3:at=10s;hot:gpu=1:at=0s;ecc:gpu=0", 8);
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->size(), 4u);
  // hot at 0s and ecc (default 0s) keep their schedule order.
  EXPECT_EQ((*f)[0].kind, FaultKind::kHot);
  EXPECT_EQ((*f)[0].gpu, 1);
  EXPECT_EQ((*f)[1].kind, FaultKind::kEcc);
  EXPECT_EQ((*f)[1].at_ms, 0);
  EXPECT_EQ((*f)[2].kind, FaultKind::kXid);
  EXPECT_EQ((*f)[2].gpu, 2);
  EXPECT_EQ((*f)[2].xid, 79u);
  EXPECT_EQ((*f)[2].at_ms, 5000);
  EXPECT_EQ((*f)[3].kind, FaultKind::kLost);
  EXPECT_EQ((*f)[3].at_ms, 10000);
  EXPECT_EQ((*f)[3].text, "lost:gpu=3:at=10s");
}

TEST(FaultScheduleTest, AcceptsCompoundDurations) {
  Result<std::vector<Fault>> f = ParseFaultSchedule("xid:gpu=0:code=13:at=1m30s", 1);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)[0].at_ms, 90000);
}

void ExpectError(const char* schedule, const char* bad_item, const char* why) {
  Result<std::vector<Fault>> f = ParseFaultSchedule(schedule, 4);
  ASSERT_FALSE(f.ok()) << schedule;
  const std::string& m = f.status().message();
  EXPECT_NE(m.find(std::string("\"") + bad_item + "\""), std::string::npos) << m;
  EXPECT_NE(m.find(why), std::string::npos) << m;
}

TEST(FaultScheduleTest, ErrorsNameTheBadItem) {
  ExpectError("xid:gpu=0:code=79;melt:gpu=1", "melt:gpu=1", "unknown kind");
  ExpectError("lost:at=1s", "lost:at=1s", "missing gpu");
  ExpectError("lost:gpu=4", "lost:gpu=4", "out of range");
  ExpectError("lost:gpu=x", "lost:gpu=x", "not a GPU index");
  ExpectError("xid:gpu=1", "xid:gpu=1", "missing code");
  ExpectError("xid:gpu=1:code=0", "xid:gpu=1:code=0", "1..65535");
  ExpectError("lost:gpu=1:code=79", "lost:gpu=1:code=79", "only to xid");
  ExpectError("hot:gpu=1:at=soon", "hot:gpu=1:at=soon", "invalid duration");
  ExpectError("hot:gpu=1:when=1s", "hot:gpu=1:when=1s", "unknown key");
  ExpectError("hot:gpu=1:at", "hot:gpu=1:at", "key=value");
  ExpectError("hot:gpu=1:gpu=2", "hot:gpu=1:gpu=2", "twice");
}

}  // namespace
}  // namespace gpumon::sim
