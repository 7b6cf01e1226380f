// The SQS query protocol's codec: form fields as botocore's query serializer writes them, read
// into the JSON protocol's members; the JSON answers as the XML its query parser reads.
#include <boost/test/unit_test.hpp>

#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "http/sqs_query.hpp"

using namespace dlq::http::sqs::query;
namespace json = boost::json;

namespace sqs_query_test {

json::object in_of(std::string_view form) { return parse(form).in; }

json::object object(std::string_view text) { return json::parse(text).as_object(); }

// The SQS error name parse() refuses `form` with, or "" when it reads it.
std::string refusal(std::string_view form) {
  try {
    parse(form);
    return "";
  } catch (const CodecError& e) {
    return e.name();
  }
}

constexpr std::string_view kProlog = "<?xml version=\"1.0\"?>";

std::string response(std::string_view action, std::string_view result) {
  return std::string(kProlog) + "<" + std::string(action) +
         "Response xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\">" + std::string(result) +
         "<ResponseMetadata><RequestId>rid</RequestId></ResponseMetadata></" +
         std::string(action) + "Response>";
}

std::string with_result(std::string_view action, std::string_view members) {
  return response(action, "<" + std::string(action) + "Result>" + std::string(members) + "</" +
                              std::string(action) + "Result>");
}

}  // namespace sqs_query_test

using namespace sqs_query_test;

BOOST_AUTO_TEST_SUITE(sqs_query)

// ---- form → JSON ---------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(action_and_version_are_read_apart_from_the_members) {
  auto p = parse("Action=SendMessage&Version=2012-11-05&QueueUrl=http%3A%2F%2Fh%3A1%2F0%2Fq"
                 "&MessageBody=hi");
  BOOST_TEST(p.action == "SendMessage");
  BOOST_TEST(p.version == "2012-11-05");
  BOOST_TEST(p.in == object(R"({"QueueUrl":"http://h:1/0/q","MessageBody":"hi"})"));
  // Version may be left out.
  auto q = parse("Action=ListQueues");
  BOOST_TEST(q.action == "ListQueues");
  BOOST_TEST(q.version == "");
  BOOST_TEST(q.in.empty());
}

BOOST_AUTO_TEST_CASE(plus_is_a_space_and_escapes_decode) {
  auto in = in_of("Action=SendMessage&MessageBody=a+b%2Bc%20d%26e%3Df%25");
  BOOST_TEST(in.at("MessageBody").as_string() == "a b+c d&e=f%");
  // UTF-8 escaped or raw, and characters RFC 3986 keeps out of a query, all taken as sent.
  BOOST_TEST(in_of("Action=X&B=%C3%A9%F4%8F%BF%BF").at("B").as_string() == "\xC3\xA9\xF4\x8F\xBF\xBF");
  BOOST_TEST(in_of("Action=X&B=[x] \xC3\xA9").at("B").as_string() == "[x] \xC3\xA9");
  BOOST_TEST(in_of("Action=X&B=%0D%0A%09").at("B").as_string() == "\r\n\t");
  // A key without `=` is empty; empty pieces are nothing.
  BOOST_TEST(in_of("&&Action=X&QueueNamePrefix&").at("QueueNamePrefix").as_string() == "");
  BOOST_TEST(in_of("Action=X&B=x%3Dy=z").at("B").as_string() == "x=y=z");
}

BOOST_AUTO_TEST_CASE(integer_members_become_numbers_when_they_are_integers) {
  auto in = in_of("Action=ReceiveMessage&MaxNumberOfMessages=10&WaitTimeSeconds=-3"
                  "&VisibilityTimeout=0&MaxResults=9223372036854775807"
                  "&MaxNumberOfMessagesPerSecond=7");
  BOOST_TEST(in.at("MaxNumberOfMessages").as_int64() == 10);
  BOOST_TEST(in.at("WaitTimeSeconds").as_int64() == -3);
  BOOST_TEST(in.at("VisibilityTimeout").as_int64() == 0);
  BOOST_TEST(in.at("MaxResults").as_int64() == INT64_MAX);
  BOOST_TEST(in.at("MaxNumberOfMessagesPerSecond").as_int64() == 7);
  // Anything else stays text, for the action's type check (SerializationException).
  for (std::string_view v : {"abc", "1.5", "%2B5", "9223372036854775808", "", "-", "1e3", "5%20"}) {
    auto got = in_of("Action=SendMessage&DelaySeconds=" + std::string(v));
    BOOST_TEST_CONTEXT(v) { BOOST_TEST(got.at("DelaySeconds").is_string()); }
  }
  // Other members stay text even when they look like numbers.
  BOOST_TEST(in_of("Action=SendMessage&MessageBody=42").at("MessageBody").as_string() == "42");
}

BOOST_AUTO_TEST_CASE(attributes_are_a_map_of_strings) {
  auto in = in_of("Action=SetQueueAttributes&QueueUrl=u"
                  "&Attribute.2.Name=DelaySeconds&Attribute.2.Value=5"
                  "&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=30");
  BOOST_TEST(in == object(R"({"QueueUrl":"u","Attributes":{"VisibilityTimeout":"30",
                                                          "DelaySeconds":"5"}})"));
  BOOST_TEST(in.at("Attributes").as_object().begin()->key() == "VisibilityTimeout");
}

BOOST_AUTO_TEST_CASE(tags_and_tag_keys) {
  BOOST_TEST(in_of("Action=TagQueue&QueueUrl=u&Tag.1.Key=team&Tag.1.Value=core"
                   "&Tag.2.Key=empty&Tag.2.Value=") ==
             object(R"({"QueueUrl":"u","Tags":{"team":"core","empty":""}})"));
  // CreateQueue's member is `tags` in the JSON protocol.
  BOOST_TEST(in_of("Action=CreateQueue&QueueName=q&Tag.1.Key=team&Tag.1.Value=core") ==
             object(R"({"QueueName":"q","tags":{"team":"core"}})"));
  BOOST_TEST(in_of("Action=UntagQueue&QueueUrl=u&TagKey.2=b&TagKey.1=a") ==
             object(R"({"QueueUrl":"u","TagKeys":["a","b"]})"));
}

BOOST_AUTO_TEST_CASE(lists_come_in_numeric_order_with_gaps) {
  BOOST_TEST(in_of("Action=GetQueueAttributes&AttributeName.10=C&AttributeName.2=B"
                   "&AttributeName.1=A") == object(R"({"AttributeNames":["A","B","C"]})"));
  BOOST_TEST(in_of("Action=ReceiveMessage&MessageAttributeName.1=All"
                   "&MessageSystemAttributeName.1=SentTimestamp&AttributeName.1=All") ==
             object(R"({"MessageAttributeNames":["All"],
                        "MessageSystemAttributeNames":["SentTimestamp"],
                        "AttributeNames":["All"]})"));
}

BOOST_AUTO_TEST_CASE(message_attributes_keep_base64_as_sent) {
  auto in = in_of(
      "Action=SendMessage&MessageBody=b"
      "&MessageAttribute.1.Name=City&MessageAttribute.1.Value.StringValue=Any+City"
      "&MessageAttribute.1.Value.DataType=String"
      "&MessageAttribute.2.Name=Greeting&MessageAttribute.2.Value.BinaryValue=SGVsbG8%3D"
      "&MessageAttribute.2.Value.DataType=Binary"
      "&MessageAttribute.3.Name=L&MessageAttribute.3.Value.DataType=String"
      "&MessageAttribute.3.Value.StringListValue.2=y&MessageAttribute.3.Value.StringListValue.1=x"
      "&MessageSystemAttribute.1.Name=AWSTraceHeader"
      "&MessageSystemAttribute.1.Value.StringValue=Root%3D1-5"
      "&MessageSystemAttribute.1.Value.DataType=String");
  BOOST_TEST(in == object(R"({
      "MessageBody":"b",
      "MessageAttributes":{
        "City":{"StringValue":"Any City","DataType":"String"},
        "Greeting":{"BinaryValue":"SGVsbG8=","DataType":"Binary"},
        "L":{"DataType":"String","StringListValues":["x","y"]}},
      "MessageSystemAttributes":{
        "AWSTraceHeader":{"StringValue":"Root=1-5","DataType":"String"}}})"));
}

BOOST_AUTO_TEST_CASE(batch_entries_are_objects_in_index_order) {
  auto in = in_of(
      "Action=SendMessageBatch&QueueUrl=u"
      "&SendMessageBatchRequestEntry.2.Id=b&SendMessageBatchRequestEntry.2.MessageBody=two"
      "&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=one+1"
      "&SendMessageBatchRequestEntry.1.DelaySeconds=5"
      "&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=n"
      "&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue=7"
      "&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Number"
      "&SendMessageBatchRequestEntry.2.DelaySeconds=x");
  BOOST_TEST(in == object(R"({"QueueUrl":"u","Entries":[
      {"Id":"a","MessageBody":"one 1","DelaySeconds":5,
       "MessageAttributes":{"n":{"StringValue":"7","DataType":"Number"}}},
      {"Id":"b","MessageBody":"two","DelaySeconds":"x"}]})"));
  BOOST_TEST(in_of("Action=DeleteMessageBatch&DeleteMessageBatchRequestEntry.1.Id=a"
                   "&DeleteMessageBatchRequestEntry.1.ReceiptHandle=r%2B%2F%3D") ==
             object(R"({"Entries":[{"Id":"a","ReceiptHandle":"r+/="}]})"));
  BOOST_TEST(in_of("Action=ChangeMessageVisibilityBatch"
                   "&ChangeMessageVisibilityBatchRequestEntry.1.Id=a"
                   "&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=r"
                   "&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=60") ==
             object(R"({"Entries":[{"Id":"a","ReceiptHandle":"r","VisibilityTimeout":60}]})"));
}

BOOST_AUTO_TEST_CASE(unknown_members_pass_as_text) {
  BOOST_TEST(in_of("Action=ListQueues&Foo=1&Bar.1.Baz=x&Attribute=y") ==
             object(R"({"Foo":"1","Bar.1.Baz":"x","Attribute":"y"})"));
}

BOOST_AUTO_TEST_CASE(refusals) {
  BOOST_TEST(refusal("QueueUrl=u") == "MissingAction");
  BOOST_TEST(refusal("Action=&QueueUrl=u") == "MissingAction");
  BOOST_TEST(refusal("") == "MissingAction");
  BOOST_TEST(refusal("Action=ListQueues&Version=2011-10-01") == "InvalidParameterValue");
  BOOST_TEST(refusal("Action=ListQueues&Version=") == "InvalidParameterValue");
  for (std::string_view form : {
           "Action=SendMessage&MessageBody=%zz",       // malformed escapes
           "Action=SendMessage&MessageBody=%4",
           "Action=SendMessage&Message%zzBody=x",
           "Action=SendMessage&MessageBody=%FF",       // not UTF-8
           "Action=SendMessage&MessageBody=%ED%A0%80",  // a surrogate
           "Action=SendMessage&MessageBody=%C0%AF",     // overlong
           "Action=X&QueueUrl=a&QueueUrl=b",           // a key twice
           "Action=X&QueueUrl=a&Queue%55rl=b",         // the same key, once decoded
           "Action=X&AttributeName.0=A",               // indexes: positive integers
           "Action=X&AttributeName.x=A",
           "Action=X&AttributeName.-1=A",
           "Action=X&AttributeName.01=A",
           "Action=X&AttributeName.4294967296=A",
           "Action=X&AttributeName.=A",
           "Action=X&Attribute.1.Value=v",             // a map entry without its name
           "Action=X&Attribute.1.Nme=a",               // an unknown part of one
           "Action=X&Attribute.1.Name=a&Attribute.2.Name=a",  // one name twice
           "Action=X&AttributeName.1.x=A",
           "Action=X&MessageAttribute.1.Value.DataType=String",
           "Action=X&SendMessageBatchRequestEntry.1=x",
           "Action=X&SendMessageBatchRequestEntry.x.Id=a",
           "Action=X&SendMessageBatchRequestEntry.1.MessageAttribute.0.Name=a",
           "Action=X&SendMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.1.Id=b",
       }) {
    BOOST_TEST_CONTEXT(form) { BOOST_TEST(refusal(form) == "InvalidParameterValue"); }
  }
  try {
    parse("Action=X&AttributeName.zero=A");
    BOOST_FAIL("refused");
  } catch (const CodecError& e) {
    BOOST_TEST(std::string(e.what()) == "the index of AttributeName.zero is not a positive integer");
  }
}

// ---- JSON → XML ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(receive_message_writes_flattened_attributes) {
  auto out = object(R"({"Messages":[{
      "MessageId":"7","ReceiptHandle":"r+/=","MD5OfBody":"m","Body":"a<b",
      "Attributes":{"SentTimestamp":"1","ApproximateReceiveCount":"2"},
      "MD5OfMessageAttributes":"d",
      "MessageAttributes":{"City":{"DataType":"String","StringValue":"Any City"},
                           "Greeting":{"DataType":"Binary","BinaryValue":"SGVsbG8="}}},
      {"MessageId":"8","ReceiptHandle":"s","MD5OfBody":"n","Body":""}]})");
  BOOST_TEST(result_xml("ReceiveMessage", out, "rid") ==
             with_result("ReceiveMessage",
                         "<Message><MessageId>7</MessageId><ReceiptHandle>r+/=</ReceiptHandle>"
                         "<MD5OfBody>m</MD5OfBody><Body>a&lt;b</Body>"
                         "<Attribute><Name>SentTimestamp</Name><Value>1</Value></Attribute>"
                         "<Attribute><Name>ApproximateReceiveCount</Name><Value>2</Value></Attribute>"
                         "<MD5OfMessageAttributes>d</MD5OfMessageAttributes>"
                         "<MessageAttribute><Name>City</Name><Value><DataType>String</DataType>"
                         "<StringValue>Any City</StringValue></Value></MessageAttribute>"
                         "<MessageAttribute><Name>Greeting</Name><Value><DataType>Binary</DataType>"
                         "<BinaryValue>SGVsbG8=</BinaryValue></Value></MessageAttribute></Message>"
                         "<Message><MessageId>8</MessageId><ReceiptHandle>s</ReceiptHandle>"
                         "<MD5OfBody>n</MD5OfBody><Body></Body></Message>"));
  // No messages: an empty Result, as SQS answers.
  BOOST_TEST(result_xml("ReceiveMessage", {}, "rid") ==
             with_result("ReceiveMessage", ""));
}

BOOST_AUTO_TEST_CASE(batch_answers_name_their_entries_by_action) {
  auto out = object(R"({"Successful":[{"Id":"a","MessageId":"1","MD5OfMessageBody":"m"}],
                        "Failed":[{"Id":"b","SenderFault":true,"Code":"InvalidParameterValue",
                                   "Message":"no"}]})");
  BOOST_TEST(result_xml("SendMessageBatch", out, "rid") ==
             with_result("SendMessageBatch",
                         "<SendMessageBatchResultEntry><Id>a</Id><MessageId>1</MessageId>"
                         "<MD5OfMessageBody>m</MD5OfMessageBody></SendMessageBatchResultEntry>"
                         "<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault>"
                         "<Code>InvalidParameterValue</Code><Message>no</Message>"
                         "</BatchResultErrorEntry>"));
  auto ids = object(R"({"Successful":[{"Id":"a"}],"Failed":[]})");
  BOOST_TEST(result_xml("DeleteMessageBatch", ids, "rid") ==
             with_result("DeleteMessageBatch",
                         "<DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>"));
  BOOST_TEST(result_xml("ChangeMessageVisibilityBatch", ids, "rid") ==
             with_result("ChangeMessageVisibilityBatch",
                         "<ChangeMessageVisibilityBatchResultEntry><Id>a</Id>"
                         "</ChangeMessageVisibilityBatchResultEntry>"));
  BOOST_TEST(result_xml("ListMessageMoveTasks",
                        object(R"({"Results":[{"TaskHandle":"t","MaxNumberOfMessagesPerSecond":5,
                                               "ApproximateNumberOfMessagesMoved":0,
                                               "FailureReason":null}]})"),
                        "rid") ==
             with_result("ListMessageMoveTasks",
                         "<ListMessageMoveTasksResultEntry><TaskHandle>t</TaskHandle>"
                         "<MaxNumberOfMessagesPerSecond>5</MaxNumberOfMessagesPerSecond>"
                         "<ApproximateNumberOfMessagesMoved>0</ApproximateNumberOfMessagesMoved>"
                         "</ListMessageMoveTasksResultEntry>"));
}

BOOST_AUTO_TEST_CASE(queue_answers) {
  BOOST_TEST(result_xml("ListQueues",
                        object(R"({"QueueUrls":["http://h/0/a","http://h/0/b&c"],"NextToken":"t"})"),
                        "rid") ==
             with_result("ListQueues", "<QueueUrl>http://h/0/a</QueueUrl>"
                                       "<QueueUrl>http://h/0/b&amp;c</QueueUrl>"
                                       "<NextToken>t</NextToken>"));
  BOOST_TEST(result_xml("ListQueues", object(R"({"QueueUrls":[]})"), "rid") ==
             with_result("ListQueues", ""));
  BOOST_TEST(result_xml("ListDeadLetterSourceQueues", object(R"({"queueUrls":["u"]})"), "rid") ==
             with_result("ListDeadLetterSourceQueues", "<QueueUrl>u</QueueUrl>"));
  BOOST_TEST(result_xml("CreateQueue", object(R"({"QueueUrl":"u"})"), "rid") ==
             with_result("CreateQueue", "<QueueUrl>u</QueueUrl>"));
  BOOST_TEST(result_xml("GetQueueAttributes",
                        object(R"({"Attributes":{"VisibilityTimeout":"30","QueueArn":"arn"}})"),
                        "rid") ==
             with_result("GetQueueAttributes",
                         "<Attribute><Name>VisibilityTimeout</Name><Value>30</Value></Attribute>"
                         "<Attribute><Name>QueueArn</Name><Value>arn</Value></Attribute>"));
  BOOST_TEST(result_xml("GetQueueAttributes", {}, "rid") == with_result("GetQueueAttributes", ""));
  BOOST_TEST(result_xml("ListQueueTags", object(R"({"Tags":{"team":"core"}})"), "rid") ==
             with_result("ListQueueTags", "<Tag><Key>team</Key><Value>core</Value></Tag>"));
}

BOOST_AUTO_TEST_CASE(empty_answers_have_no_result_element) {
  for (std::string_view action :
       {"DeleteMessage", "DeleteQueue", "PurgeQueue", "SetQueueAttributes", "TagQueue",
        "UntagQueue", "ChangeMessageVisibility", "AddPermission", "RemovePermission"}) {
    BOOST_TEST_CONTEXT(action) {
      BOOST_TEST(result_xml(action, {}, "rid") == response(action, ""));
    }
  }
  BOOST_TEST(response("DeleteMessage", "") ==
             "<?xml version=\"1.0\"?><DeleteMessageResponse "
             "xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ResponseMetadata>"
             "<RequestId>rid</RequestId></ResponseMetadata></DeleteMessageResponse>");
}

BOOST_AUTO_TEST_CASE(only_members_with_values_are_written) {
  auto out = object(R"({"A":null,"B":[],"C":{},"D":false,"E":-5,"F":18446744073709551615,
                        "MessageAttributes":{"x":{"DataType":"String","StringValue":"v",
                                                  "StringListValues":[],"BinaryListValues":["QQ=="]}}})");
  BOOST_TEST(result_xml("SendMessage", out, "rid") ==
             with_result("SendMessage",
                         "<D>false</D><E>-5</E><F>18446744073709551615</F>"
                         "<MessageAttribute><Name>x</Name><Value><DataType>String</DataType>"
                         "<StringValue>v</StringValue><BinaryListValue>QQ==</BinaryListValue>"
                         "</Value></MessageAttribute>"));
}

BOOST_AUTO_TEST_CASE(error_response) {
  BOOST_TEST(error_xml(true, "AWS.SimpleQueueService.NonExistentQueue",
                       "The specified queue does not exist.", "r-1") ==
             "<?xml version=\"1.0\"?><ErrorResponse "
             "xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><Error><Type>Sender</Type>"
             "<Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
             "<Message>The specified queue does not exist.</Message><Detail/></Error>"
             "<RequestId>r-1</RequestId></ErrorResponse>");
  BOOST_TEST(error_xml(false, "InternalFailure", "a & <b>", "r-2") ==
             "<?xml version=\"1.0\"?><ErrorResponse "
             "xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><Error><Type>Receiver</Type>"
             "<Code>InternalFailure</Code><Message>a &amp; &lt;b&gt;</Message><Detail/></Error>"
             "<RequestId>r-2</RequestId></ErrorResponse>");
}

BOOST_AUTO_TEST_CASE(text_escaping) {
  BOOST_TEST(xml_text("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e'f");
  BOOST_TEST(xml_text("<![CDATA[x]]>") == "&lt;![CDATA[x]]&gt;");
  // A raw CR would come back as LF: every whitespace control goes as a reference.
  BOOST_TEST(xml_text("a\r\nb\rc\td") == "a&#xD;&#xA;b&#xD;c&#x9;d");
  // Valid UTF-8 passes unchanged, the last code point and the BMP's edges included.
  for (std::string_view s : {"\xF4\x8F\xBF\xBF", "\xC3\xA9\xE2\x82\xAC", "\xED\x9F\xBF",
                             "\xEE\x80\x80", "\xEF\xBF\xBD", "\xF0\x90\x80\x80"}) {
    BOOST_TEST(xml_text(s) == s);
  }
  // What XML 1.0 cannot hold, even as a reference, becomes U+FFFD.
  const std::string fffd = "\xEF\xBF\xBD";
  BOOST_TEST(xml_text(std::string_view("a\0b", 3)) == "a" + fffd + "b");
  BOOST_TEST(xml_text("\x01\x0B\x0C\x1F") == fffd + fffd + fffd + fffd);
  BOOST_TEST(xml_text("\xEF\xBF\xBE\xEF\xBF\xBF") == fffd + fffd);  // U+FFFE, U+FFFF
  BOOST_TEST(xml_text("\xFF" "a") == fffd + "a");
  BOOST_TEST(xml_text("\xED\xA0\x80") == fffd + fffd + fffd);        // a surrogate
  BOOST_TEST(xml_text("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // past U+10FFFF
  BOOST_TEST(xml_text("\xC3") == fffd);                               // cut short
}

BOOST_AUTO_TEST_SUITE_END()
