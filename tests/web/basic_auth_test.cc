#include "web/basic_auth.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "test_certs.h"

namespace gpumon::web {
namespace {

std::string Header(const std::string& user_colon_password) {
  // Base64 by hand-picked examples is brittle; encode with OpenSSL instead.
  std::string out(4 * ((user_colon_password.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(user_colon_password.data()),
                                static_cast<int>(user_colon_password.size()));
  out.resize(n);
  return "Basic " + out;
}

TEST(BasicAuthTest, ParseHeader) {
  std::string user, password;
  ASSERT_TRUE(BasicAuth::ParseHeader(Header("alice:a:b"), &user, &password));
  EXPECT_EQ(user, "alice");
  EXPECT_EQ(password, "a:b");  // only the first colon separates
  ASSERT_TRUE(BasicAuth::ParseHeader("basic " + Header("x:").substr(6), &user, &password));
  EXPECT_EQ(user, "x");
  EXPECT_EQ(password, "");
  EXPECT_FALSE(BasicAuth::ParseHeader(Header("nocolon"), &user, &password));
  EXPECT_FALSE(BasicAuth::ParseHeader("Bearer abc", &user, &password));
  EXPECT_FALSE(BasicAuth::ParseHeader("Basic !!!!", &user, &password));
  EXPECT_FALSE(BasicAuth::ParseHeader("", &user, &password));
}

TEST(BasicAuthTest, VerifyBcryptAcceptsEveryMinorVersion) {
  const std::string hash = testing::BcryptHash("pw");
  ASSERT_EQ(hash.substr(0, 7), "$2b$04$");
  EXPECT_TRUE(BasicAuth::VerifyBcrypt("pw", hash));
  EXPECT_FALSE(BasicAuth::VerifyBcrypt("pw2", hash));
  // $2y$ (htpasswd -B) and $2a$ hashes of the same salt and password carry
  // the same digest for ASCII passwords.
  for (const char minor : {'a', 'y'}) {
    std::string other = hash;
    other[2] = minor;
    EXPECT_TRUE(BasicAuth::VerifyBcrypt("pw", other)) << other;
  }
  EXPECT_FALSE(BasicAuth::VerifyBcrypt("pw", "$1$notbcrypt"));
  EXPECT_FALSE(BasicAuth::VerifyBcrypt("pw", ""));
}

TEST(BasicAuthTest, Check) {
  BasicAuth auth({{"alice", testing::BcryptHash("wonderland")}});
  EXPECT_TRUE(auth.Check(Header("alice:wonderland")));
  EXPECT_TRUE(auth.Check(Header("alice:wonderland")));  // cached
  EXPECT_FALSE(auth.Check(Header("alice:Wonderland")));
  EXPECT_FALSE(auth.Check(Header("alice:Wonderland")));  // cached failure
  EXPECT_FALSE(auth.Check(Header("mallory:wonderland")));
  EXPECT_FALSE(auth.Check(""));
}

// crypt_r() reads a C string: without a check, "wonderland\0junk" would be
// verified as "wonderland".
TEST(BasicAuthTest, PasswordWithNulNeverMatches) {
  BasicAuth auth({{"alice", testing::BcryptHash("wonderland")}});
  const std::string with_nul("alice:wonderland\0junk", 21);
  EXPECT_FALSE(auth.Check(Header(with_nul)));
  EXPECT_FALSE(auth.Check(Header(std::string("alice:wonderland\0", 17))));
  EXPECT_EQ(auth.CachedCheck(Header(with_nul)), std::optional<bool>(false));
  EXPECT_TRUE(auth.Check(Header("alice:wonderland")));
}

TEST(BasicAuthTest, CachedCheckNeverRunsBcrypt) {
  BasicAuth auth({{"alice", testing::BcryptHash("wonderland")}});
  EXPECT_EQ(auth.CachedCheck(Header("alice:wonderland")), std::nullopt);  // not checked yet
  EXPECT_TRUE(auth.Check(Header("alice:wonderland")));
  EXPECT_EQ(auth.CachedCheck(Header("alice:wonderland")), std::optional<bool>(true));
  EXPECT_FALSE(auth.Check(Header("alice:nope")));
  EXPECT_EQ(auth.CachedCheck(Header("alice:nope")), std::optional<bool>(false));
  EXPECT_EQ(auth.CachedCheck("Bearer x"),
            std::optional<bool>(false));  // malformed: no check needed
}

TEST(BasicAuthTest, ManyDistinctFailuresKeepWorking) {
  BasicAuth auth({{"alice", testing::BcryptHash("wonderland")}});
  for (int i = 0; i < 150; ++i) {  // past the cache size: eviction runs
    EXPECT_FALSE(auth.Check(Header("alice:guess" + std::to_string(i))));
  }
  EXPECT_TRUE(auth.Check(Header("alice:wonderland")));
}

}  // namespace
}  // namespace gpumon::web
