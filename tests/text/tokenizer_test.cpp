// Whole tokenizer.json documents against HuggingFace tokenizers 0.23.3: small BERT (WordPiece, TemplateProcessing)
// and RoBERTa (byte-level BPE, RobertaProcessing) tokenizers built in Python with tokenizers 0.23.3 and serialised
// with to_str(); the expected encodings were printed by the same script (character offsets converted to bytes).
// Special tokens' sequence ids, which tokenizers leaves unset, are not compared here (post_processor_test does).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accel/text/tokenizer.hpp"

namespace accel::text {

void PrintTo(const Range& range, std::ostream* out) { *out << "{" << range.begin << ", " << range.end << "}"; }

namespace {

constexpr std::uint32_t kNone = 255;  // tokenizers gives no sequence id

struct Expected {
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> type_ids;
  std::vector<std::string> tokens;
  std::vector<Range> offsets;
  std::vector<std::uint8_t> special;
  std::vector<std::uint32_t> sequence;
};

struct Case {
  std::string text;
  std::optional<std::string> pair;
  EncodeOptions options;
  bool truncated = false;
  Expected expected;
};

constexpr const char* kBert =
    R"json({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":0,"content":"[PAD]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":1,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":2,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":3,"content":"[SEP]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":4,"content":"[MASK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}},"decoder":null,"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"[MASK]":4,"hello":5,"world":6,"the":7,"cat":8,"##s":9,"sat":10,"on":11,"mat":12,"a":13,"##b":14,"##c":15,",":16,".":17,"!":18,"'":19,"un":20,"##believ":21,"##able":22,"中":23,"国":24,"cafe":25,"naive":26,"ส":27,"ว":28,"ั":29,"ด":30,"ี":31,"😀":32,"م":33,"ر":34,"ح":35,"ب":36,"ا":37}}})json";

constexpr const char* kBertWithAddedTokens =
    R"json({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":0,"content":"[PAD]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":1,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":2,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":3,"content":"[SEP]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":4,"content":"[MASK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":38,"content":"<mask>","single_word":false,"lstrip":true,"rstrip":true,"normalized":false,"special":true},{"id":39,"content":"Yes","single_word":false,"lstrip":false,"rstrip":false,"normalized":true,"special":false},{"id":40,"content":"xx","single_word":true,"lstrip":false,"rstrip":false,"normalized":false,"special":false},{"id":41,"content":"中文","single_word":false,"lstrip":false,"rstrip":true,"normalized":true,"special":false}],"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],"pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}},{"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],"special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}},"decoder":null,"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"[MASK]":4,"hello":5,"world":6,"the":7,"cat":8,"##s":9,"sat":10,"on":11,"mat":12,"a":13,"##b":14,"##c":15,",":16,".":17,"!":18,"'":19,"un":20,"##believ":21,"##able":22,"中":23,"国":24,"cafe":25,"naive":26,"ส":27,"ว":28,"ั":29,"ด":30,"ี":31,"😀":32,"م":33,"ر":34,"ح":35,"ب":36,"ا":37}}})json";

constexpr const char* kRoberta =
    R"json({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":0,"content":"<s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":1,"content":"<pad>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":2,"content":"</s>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":3,"content":"<unk>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},{"id":4,"content":"<mask>","single_word":false,"lstrip":true,"rstrip":false,"normalized":false,"special":true}],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},"post_processor":{"type":"RobertaProcessing","sep":["</s>",2],"cls":["<s>",0],"trim_offsets":true,"add_prefix_space":false},"decoder":null,"model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"vocab":{"<s>":0,"<pad>":1,"</s>":2,"<unk>":3,"<mask>":4,"!":5,"\"":6,"#":7,"$":8,"%":9,"&":10,"'":11,"(":12,")":13,"*":14,"+":15,",":16,"-":17,".":18,"/":19,"0":20,"1":21,"2":22,"3":23,"4":24,"5":25,"6":26,"7":27,"8":28,"9":29,":":30,";":31,"<":32,"=":33,">":34,"?":35,"@":36,"A":37,"B":38,"C":39,"D":40,"E":41,"F":42,"G":43,"H":44,"I":45,"J":46,"K":47,"L":48,"M":49,"N":50,"O":51,"P":52,"Q":53,"R":54,"S":55,"T":56,"U":57,"V":58,"W":59,"X":60,"Y":61,"Z":62,"[":63,"\\":64,"]":65,"^":66,"_":67,"`":68,"a":69,"b":70,"c":71,"d":72,"e":73,"f":74,"g":75,"h":76,"i":77,"j":78,"k":79,"l":80,"m":81,"n":82,"o":83,"p":84,"q":85,"r":86,"s":87,"t":88,"u":89,"v":90,"w":91,"x":92,"y":93,"z":94,"{":95,"|":96,"}":97,"~":98,"¡":99,"¢":100,"£":101,"¤":102,"¥":103,"¦":104,"§":105,"¨":106,"©":107,"ª":108,"«":109,"¬":110,"®":111,"¯":112,"°":113,"±":114,"²":115,"³":116,"´":117,"µ":118,"¶":119,"·":120,"¸":121,"¹":122,"º":123,"»":124,"¼":125,"½":126,"¾":127,"¿":128,"À":129,"Á":130,"Â":131,"Ã":132,"Ä":133,"Å":134,"Æ":135,"Ç":136,"È":137,"É":138,"Ê":139,"Ë":140,"Ì":141,"Í":142,"Î":143,"Ï":144,"Ð":145,"Ñ":146,"Ò":147,"Ó":148,"Ô":149,"Õ":150,"Ö":151,"×":152,"Ø":153,"Ù":154,"Ú":155,"Û":156,"Ü":157,"Ý":158,"Þ":159,"ß":160,"à":161,"á":162,"â":163,"ã":164,"ä":165,"å":166,"æ":167,"ç":168,"è":169,"é":170,"ê":171,"ë":172,"ì":173,"í":174,"î":175,"ï":176,"ð":177,"ñ":178,"ò":179,"ó":180,"ô":181,"õ":182,"ö":183,"÷":184,"ø":185,"ù":186,"ú":187,"û":188,"ü":189,"ý":190,"þ":191,"ÿ":192,"Ā":193,"ā":194,"Ă":195,"ă":196,"Ą":197,"ą":198,"Ć":199,"ć":200,"Ĉ":201,"ĉ":202,"Ċ":203,"ċ":204,"Č":205,"č":206,"Ď":207,"ď":208,"Đ":209,"đ":210,"Ē":211,"ē":212,"Ĕ":213,"ĕ":214,"Ė":215,"ė":216,"Ę":217,"ę":218,"Ě":219,"ě":220,"Ĝ":221,"ĝ":222,"Ğ":223,"ğ":224,"Ġ":225,"ġ":226,"Ģ":227,"ģ":228,"Ĥ":229,"ĥ":230,"Ħ":231,"ħ":232,"Ĩ":233,"ĩ":234,"Ī":235,"ī":236,"Ĭ":237,"ĭ":238,"Į":239,"į":240,"İ":241,"ı":242,"Ĳ":243,"ĳ":244,"Ĵ":245,"ĵ":246,"Ķ":247,"ķ":248,"ĸ":249,"Ĺ":250,"ĺ":251,"Ļ":252,"ļ":253,"Ľ":254,"ľ":255,"Ŀ":256,"ŀ":257,"Ł":258,"ł":259,"Ń":260,"he":261,"er":262,"ll":263,"Ġt":264,"llo":265,"ld":266,"or":267,"wor":268,"Ġwor":269,"hello":270,"Ġworld":271,"en":272,"ken":273,"oken":274,"re":275,"sp":276,"um":277,"ver":278,"ĠĠ":279,"Ġhello":280,"Ġsp":281,"here":282,"ers":283,"12":284,"45":285,"67":286,"He":287,"Num":288,"The":289,"Token":290,"ac":291,"af":292,"an":293,"az":294,"aÃ":295,"br":296,"bers":297,"ck":298,"caf":299},"merges":[["h","e"],["e","r"],["l","l"],["Ġ","t"],["ll","o"],["l","d"],["o","r"],["w","or"],["Ġ","wor"],["he","llo"],["Ġwor","ld"],["e","n"],["k","en"],["o","ken"],["r","e"],["s","p"],["u","m"],["v","er"],["Ġ","Ġ"],["Ġ","hello"],["Ġ","sp"],["he","re"],["er","s"],["1","2"],["4","5"],["6","7"],["H","e"],["N","um"],["T","he"],["T","oken"],["a","c"],["a","f"],["a","n"],["a","z"],["a","Ã"],["b","r"],["b","ers"],["c","k"],["c","af"]]}})json";

const std::vector<Case> kBertCases = {
    {"",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 3},
      .type_ids = {0, 0},
      .tokens = {"[CLS]", "[SEP]"},
      .offsets = {{0, 0}, {0, 0}},
      .special = {1, 1},
      .sequence = {kNone, kNone}}},
    {"   ",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 3},
      .type_ids = {0, 0},
      .tokens = {"[CLS]", "[SEP]"},
      .offsets = {{0, 0}, {0, 0}},
      .special = {1, 1},
      .sequence = {kNone, kNone}}},
    {"Hello, world!",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 5, 16, 6, 18, 3},
      .type_ids = {0, 0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "hello", ",", "world", "!", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone}}},
    {"  Hello \x09\x0a world  ",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 5, 6, 3},
      .type_ids = {0, 0, 0, 0},
      .tokens = {"[CLS]", "hello", "world", "[SEP]"},
      .offsets = {{0, 0}, {2, 7}, {11, 16}, {0, 0}},
      .special = {1, 0, 0, 1},
      .sequence = {kNone, 0, 0, kNone}}},
    {"caf\xc3\xa9 cafe\xcc\x81 CAF\xc3\x89",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 25, 25, 25, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "cafe", "cafe", "cafe", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {6, 10}, {13, 18}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"\xe4\xb8\xad\xe5\x9b\xbd\xe4\xba\xba",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 23, 24, 1, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "\xe4\xb8\xad", "\xe5\x9b\xbd", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {3, 6}, {6, 9}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"I \xf0\x9f\x98\x80 emoji",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 1, 32, 1, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "[UNK]", "\xf0\x9f\x98\x80", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 1}, {2, 6}, {7, 12}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"\xe0\xb8\xaa\xe0\xb8\xa7\xe0\xb8\xb1\xe0\xb8\xaa\xe0\xb8\x94\xe0\xb8\xb5 "
     "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 1, 1, 3},
      .type_ids = {0, 0, 0, 0},
      .tokens = {"[CLS]", "[UNK]", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 15}, {19, 29}, {0, 0}},
      .special = {1, 0, 0, 1},
      .sequence = {kNone, 0, 0, kNone}}},
    {"ctrl\x01\x07"
     "char\xe2\x80\x8b",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 1, 3},
      .type_ids = {0, 0, 0},
      .tokens = {"[CLS]", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 10}, {0, 0}},
      .special = {1, 0, 1},
      .sequence = {kNone, 0, kNone}}},
    {"the [MASK] sat",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 7, 4, 10, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "the", "[MASK]", "sat", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {4, 10}, {11, 14}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"the [mask] sat",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 7, 1, 1, 1, 10, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "the", "[UNK]", "[UNK]", "[UNK]", "sat", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {4, 5}, {5, 9}, {9, 10}, {11, 14}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, kNone}}},
    {"[CLS][SEP]",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 2, 3, 3},
      .type_ids = {0, 0, 0, 0},
      .tokens = {"[CLS]", "[CLS]", "[SEP]", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 10}, {0, 0}},
      .special = {1, 0, 0, 1},
      .sequence = {kNone, 0, 0, kNone}}},
    {"unbelievable cats",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 20, 21, 22, 8, 9, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "un", "##believ", "##able", "cat", "##s", "[SEP]"},
      .offsets = {{0, 0}, {0, 2}, {2, 8}, {8, 12}, {13, 16}, {16, 17}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, kNone}}},
    {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaa",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 1, 3},
      .type_ids = {0, 0, 0},
      .tokens = {"[CLS]", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 120}, {0, 0}},
      .special = {1, 0, 1},
      .sequence = {kNone, 0, kNone}}},
    {"Hello, world!",
     "the cats sat on the mat",
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 5, 16, 6, 18, 3, 7, 8, 9, 10, 11, 7, 12, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
      .tokens = {"[CLS]", "hello", ",", "world", "!", "[SEP]", "the", "cat", "##s", "sat", "on", "the", "mat", "[SEP]"},
      .offsets = {{0, 0},
                  {0, 5},
                  {5, 6},
                  {7, 12},
                  {12, 13},
                  {0, 0},
                  {0, 3},
                  {4, 7},
                  {7, 8},
                  {9, 12},
                  {13, 15},
                  {16, 19},
                  {20, 23},
                  {0, 0}},
      .special = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone, 1, 1, 1, 1, 1, 1, 1, kNone}}},
    {"Hello, world!",
     "the cats sat on the mat",
     {.add_special_tokens = true, .max_length = 9, .side = TruncationSide::right},
     true,
     {.ids = {2, 5, 16, 6, 3, 7, 8, 9, 3},
      .type_ids = {0, 0, 0, 0, 0, 1, 1, 1, 1},
      .tokens = {"[CLS]", "hello", ",", "world", "[SEP]", "the", "cat", "##s", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 6}, {7, 12}, {0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}},
      .special = {1, 0, 0, 0, 1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone, 1, 1, 1, kNone}}},
    {"Hello, world! hello world",
     "the cats sat",
     {.add_special_tokens = true, .max_length = 10, .side = TruncationSide::right},
     true,
     {.ids = {2, 5, 16, 6, 18, 3, 7, 8, 9, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
      .tokens = {"[CLS]", "hello", ",", "world", "!", "[SEP]", "the", "cat", "##s", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone, 1, 1, 1, kNone}}},
    {"Hello, world! hello world",
     "the cats sat",
     {.add_special_tokens = true, .max_length = 10, .side = TruncationSide::left},
     true,
     {.ids = {2, 6, 18, 5, 6, 3, 8, 9, 10, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
      .tokens = {"[CLS]", "world", "!", "hello", "world", "[SEP]", "cat", "##s", "sat", "[SEP]"},
      .offsets = {{0, 0}, {7, 12}, {12, 13}, {14, 19}, {20, 25}, {0, 0}, {4, 7}, {7, 8}, {9, 12}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone, 1, 1, 1, kNone}}},
    {"the cats sat on the mat",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 5, .side = TruncationSide::left},
     true,
     {.ids = {2, 11, 7, 12, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "on", "the", "mat", "[SEP]"},
      .offsets = {{0, 0}, {13, 15}, {16, 19}, {20, 23}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"the cats sat on the mat",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 5, .side = TruncationSide::right},
     true,
     {.ids = {2, 7, 8, 9, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "the", "cat", "##s", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {4, 7}, {7, 8}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"the cats sat on the mat",
     std::nullopt,
     {.add_special_tokens = false, .max_length = 3, .side = TruncationSide::right},
     true,
     {.ids = {7, 8, 9},
      .type_ids = {0, 0, 0},
      .tokens = {"the", "cat", "##s"},
      .offsets = {{0, 3}, {4, 7}, {7, 8}},
      .special = {0, 0, 0},
      .sequence = {0, 0, 0}}},
    {"Hello, world!",
     "the cats",
     {.add_special_tokens = false, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {5, 16, 6, 18, 7, 8, 9},
      .type_ids = {0, 0, 0, 0, 1, 1, 1},
      .tokens = {"hello", ",", "world", "!", "the", "cat", "##s"},
      .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 3}, {4, 7}, {7, 8}},
      .special = {0, 0, 0, 0, 0, 0, 0},
      .sequence = {0, 0, 0, 0, 1, 1, 1}}},
    {"",
     "the cats",
     {.add_special_tokens = true, .max_length = 4, .side = TruncationSide::right},
     true,
     {.ids = {2, 3, 7, 3},
      .type_ids = {0, 0, 1, 1},
      .tokens = {"[CLS]", "[SEP]", "the", "[SEP]"},
      .offsets = {{0, 0}, {0, 0}, {0, 3}, {0, 0}},
      .special = {1, 1, 0, 1},
      .sequence = {kNone, kNone, 1, kNone}}},
};

const std::vector<Case> kBertAddedTokenCases = {
    {"hello  <mask>  world",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 5, 38, 6, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "hello", "  <mask>  ", "world", "[SEP]"},
      .offsets = {{0, 0}, {0, 5}, {5, 15}, {15, 20}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"YES yes Yes",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 39, 39, 39, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "yes", "yes", "yes", "[SEP]"},
      .offsets = {{0, 0}, {0, 3}, {4, 7}, {8, 11}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"xx axx (xx)",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 40, 1, 1, 40, 1, 3},
      .type_ids = {0, 0, 0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "xx", "[UNK]", "[UNK]", "xx", "[UNK]", "[SEP]"},
      .offsets = {{0, 0}, {0, 2}, {3, 6}, {7, 8}, {8, 10}, {10, 11}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, kNone}}},
    {"\xe4\xb8\xad\xe6\x96\x87  \xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 41, 41, 23, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", " \xe4\xb8\xad  \xe6\x96\x87    ", " \xe4\xb8\xad  \xe6\x96\x87  ", "\xe4\xb8\xad", "[SEP]"},
      .offsets = {{0, 0}, {0, 11}, {8, 17}, {14, 17}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
    {"[MASK]<mask>[SEP]",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {2, 4, 38, 3, 3},
      .type_ids = {0, 0, 0, 0, 0},
      .tokens = {"[CLS]", "[MASK]", "<mask>", "[SEP]", "[SEP]"},
      .offsets = {{0, 0}, {0, 6}, {6, 12}, {12, 17}, {0, 0}},
      .special = {1, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, kNone}}},
};

const std::vector<Case> kRobertaCases = {
    {"Hello  world, <mask> there!",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0, 287, 265, 225, 271, 16, 4, 264, 282, 5, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>", "He", "llo", "\xc4\xa0", "\xc4\xa0world", ",", " <mask>", "\xc4\xa0t", "here", "!", "</s>"},
      .offsets = {{0, 0}, {0, 2}, {2, 5}, {6, 6}, {7, 12}, {12, 13}, {14, 20}, {21, 22}, {22, 26}, {26, 27}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}}},
    {"",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0, 2},
      .type_ids = {0, 0},
      .tokens = {"<s>", "</s>"},
      .offsets = {{0, 0}, {0, 0}},
      .special = {1, 1},
      .sequence = {kNone, kNone}}},
    {"  spaces   everywhere  ",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0, 225, 281, 291, 73, 87, 279, 225, 73, 278, 93, 91, 282, 279, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>", "\xc4\xa0", "\xc4\xa0sp", "ac", "e", "s", "\xc4\xa0\xc4\xa0", "\xc4\xa0", "e", "ver", "y", "w",
                 "here", "\xc4\xa0\xc4\xa0", "</s>"},
      .offsets = {{0, 0},
                  {1, 1},
                  {2, 4},
                  {4, 6},
                  {6, 7},
                  {7, 8},
                  {10, 10},
                  {11, 11},
                  {11, 12},
                  {12, 15},
                  {15, 16},
                  {16, 17},
                  {17, 21},
                  {23, 23},
                  {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}}},
    {"caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe5\x9b\xbd \xf0\x9f\x98\x80",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0,   299, 132, 107, 225, 82,  295, 112, 90,  73,  225, 165,
              121, 260, 166, 254, 126, 225, 177, 258, 251, 227, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>",      "caf",      "\xc3\x83", "\xc2\xa9", "\xc4\xa0", "n",        "a\xc3\x83", "\xc2\xaf",
                 "v",        "e",        "\xc4\xa0", "\xc3\xa4", "\xc2\xb8", "\xc5\x83", "\xc3\xa5",  "\xc4\xbd",
                 "\xc2\xbd", "\xc4\xa0", "\xc3\xb0", "\xc5\x81", "\xc4\xba", "\xc4\xa2", "</s>"},
      .offsets = {{0, 0},   {0, 3},   {3, 5},   {3, 5},   {6, 6},   {6, 7},   {7, 10},  {8, 10},
                  {10, 11}, {11, 12}, {13, 13}, {13, 16}, {13, 16}, {13, 16}, {16, 19}, {16, 19},
                  {16, 19}, {20, 20}, {20, 24}, {20, 24}, {20, 24}, {20, 24}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}}},
    {"<mask>",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0, 4, 2},
      .type_ids = {0, 0, 0},
      .tokens = {"<s>", "<mask>", "</s>"},
      .offsets = {{0, 0}, {0, 6}, {0, 0}},
      .special = {1, 0, 1},
      .sequence = {kNone, 0, kNone}}},
    {"Numbers 123 and 4567.\x0a",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0, 288, 297, 225, 284, 23, 225, 293, 72, 225, 285, 286, 18, 203, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>", "Num", "bers", "\xc4\xa0", "12", "3", "\xc4\xa0", "an", "d", "\xc4\xa0", "45", "67", ".",
                 "\xc4\x8a", "</s>"},
      .offsets = {{0, 0},
                  {0, 3},
                  {3, 7},
                  {8, 8},
                  {8, 10},
                  {10, 11},
                  {12, 12},
                  {12, 14},
                  {14, 15},
                  {16, 16},
                  {16, 18},
                  {18, 20},
                  {20, 21},
                  {21, 22},
                  {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, kNone}}},
    {"Hello world, hello there!",
     "The quick brown fox.",
     {.add_special_tokens = true, .max_length = 0, .side = TruncationSide::right},
     false,
     {.ids = {0,  287, 265, 271, 16,  280, 264, 282, 5,   2,  2,  289, 225, 85,
              89, 77,  298, 225, 296, 83,  91,  82,  225, 74, 83, 92,  18,  2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>",       "He",
                 "llo",       "\xc4\xa0world",
                 ",",         "\xc4\xa0hello",
                 "\xc4\xa0t", "here",
                 "!",         "</s>",
                 "</s>",      "The",
                 "\xc4\xa0",  "q",
                 "u",         "i",
                 "ck",        "\xc4\xa0",
                 "br",        "o",
                 "w",         "n",
                 "\xc4\xa0",  "f",
                 "o",         "x",
                 ".",         "</s>"},
      .offsets = {{0, 0},   {0, 2},   {2, 5},   {6, 11},  {11, 12}, {13, 18}, {19, 20}, {20, 24}, {24, 25}, {0, 0},
                  {0, 0},   {0, 3},   {4, 4},   {4, 5},   {5, 6},   {6, 7},   {7, 9},   {10, 10}, {10, 12}, {12, 13},
                  {13, 14}, {14, 15}, {16, 16}, {16, 17}, {17, 18}, {18, 19}, {19, 20}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, 0, 0, 0, 0, kNone, kNone, 1, 1, 1,
                   1,     1, 1, 1, 1, 1, 1, 1, 1, 1,     1,     1, 1, kNone}}},
    {"Hello world, hello there!",
     "The quick brown fox.",
     {.add_special_tokens = true, .max_length = 12, .side = TruncationSide::left},
     true,
     {.ids = {0, 280, 264, 282, 5, 2, 2, 74, 83, 92, 18, 2},
      .type_ids = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      .tokens = {"<s>", "\xc4\xa0hello", "\xc4\xa0t", "here", "!", "</s>", "</s>", "f", "o", "x", ".", "</s>"},
      .offsets = {{0, 0},
                  {13, 18},
                  {19, 20},
                  {20, 24},
                  {24, 25},
                  {0, 0},
                  {0, 0},
                  {16, 17},
                  {17, 18},
                  {18, 19},
                  {19, 20},
                  {0, 0}},
      .special = {1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone, kNone, 1, 1, 1, 1, kNone}}},
    {"Hello world, hello there!",
     std::nullopt,
     {.add_special_tokens = true, .max_length = 6, .side = TruncationSide::right},
     true,
     {.ids = {0, 287, 265, 271, 16, 2},
      .type_ids = {0, 0, 0, 0, 0, 0},
      .tokens = {"<s>", "He", "llo", "\xc4\xa0world", ",", "</s>"},
      .offsets = {{0, 0}, {0, 2}, {2, 5}, {6, 11}, {11, 12}, {0, 0}},
      .special = {1, 0, 0, 0, 0, 1},
      .sequence = {kNone, 0, 0, 0, 0, kNone}}},
};

std::optional<Tokenizer> load(const char* document) {
  auto tokenizer = Tokenizer::from_json(document);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  if (!tokenizer.ok()) return std::nullopt;
  return std::move(*tokenizer);
}

void expect_encoding(const Encoding& actual, const Expected& expected, bool truncated, const std::string& what) {
  EXPECT_EQ(actual.ids, expected.ids) << what;
  EXPECT_EQ(actual.type_ids, expected.type_ids) << what;
  EXPECT_EQ(actual.tokens, expected.tokens) << what;
  EXPECT_EQ(actual.offsets, expected.offsets) << what;
  EXPECT_EQ(actual.special_tokens_mask, expected.special) << what;
  EXPECT_EQ(actual.truncated, truncated) << what;
  ASSERT_EQ(actual.sequence_ids.size(), expected.sequence.size()) << what;
  for (std::size_t i = 0; i < expected.sequence.size(); ++i) {
    if (expected.sequence[i] != kNone) {
      EXPECT_EQ(actual.sequence_ids[i], expected.sequence[i]) << what << " token " << i;
    }
  }
}

void expect_cases(const char* document, const std::vector<Case>& cases) {
  const std::optional<Tokenizer> tokenizer = load(document);
  ASSERT_TRUE(tokenizer.has_value());
  for (const Case& c : cases) {
    const std::string what =
        c.text + (c.pair ? " | " + *c.pair : "") + " max_length " + std::to_string(c.options.max_length);
    auto encoding = c.pair ? tokenizer->encode_pair(c.text, *c.pair, c.options) : tokenizer->encode(c.text, c.options);
    ASSERT_TRUE(encoding.ok()) << what << ": " << encoding.status().message();
    expect_encoding(*encoding, c.expected, c.truncated, what);
  }
}

TEST(TokenizerTest, BertWordPieceWithTemplate) { expect_cases(kBert, kBertCases); }
TEST(TokenizerTest, BertWithLstripRstripSingleWordAndNormalizedAddedTokens) {
  expect_cases(kBertWithAddedTokens, kBertAddedTokenCases);
}
TEST(TokenizerTest, RobertaByteLevelBpe) { expect_cases(kRoberta, kRobertaCases); }

TEST(TokenizerTest, WithoutAPostProcessorAPairIsConcatenated) {
  // tokenizers 0.23.3 with the BERT document's post_processor set to None: "Hello, world!" | "the cats".
  std::string document = kBert;
  const std::size_t at = document.find("\"post_processor\":{");
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = document.find("\"decoder\"", at);
  document.replace(at, end - at, "\"post_processor\":null,");
  const std::optional<Tokenizer> tokenizer = load(document.c_str());
  ASSERT_TRUE(tokenizer.has_value());
  auto encoding = tokenizer->encode_pair("Hello, world!", "the cats");
  ASSERT_TRUE(encoding.ok()) << encoding.status().message();
  expect_encoding(*encoding,
                  {.ids = {5, 16, 6, 18, 7, 8, 9},
                   .type_ids = {0, 0, 0, 0, 1, 1, 1},
                   .tokens = {"hello", ",", "world", "!", "the", "cat", "##s"},
                   .offsets = {{0, 5}, {5, 6}, {7, 12}, {12, 13}, {0, 3}, {4, 7}, {7, 8}},
                   .special = {0, 0, 0, 0, 0, 0, 0},
                   .sequence = {0, 0, 0, 0, 1, 1, 1}},
                  false, "no post-processor");
}

TEST(TokenizerTest, EncodeBatchKeepsOrderAndNamesTheFirstBadText) {
  const std::optional<Tokenizer> tokenizer = load(kBert);
  ASSERT_TRUE(tokenizer.has_value());
  std::vector<std::string> texts;
  for (int i = 0; i < 100; ++i) texts.push_back(i % 3 == 0 ? "Hello, world!" : "the cats sat on the mat");
  auto batch = tokenizer->encode_batch(texts, {.max_length = 6}, 4);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  ASSERT_EQ(batch->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    auto single = tokenizer->encode(texts[i], {.max_length = 6});
    ASSERT_TRUE(single.ok());
    EXPECT_EQ((*batch)[i].ids, single->ids) << i;
    EXPECT_EQ((*batch)[i].offsets, single->offsets) << i;
  }
  texts[77] = "bad \xff";
  texts[41] = "bad \xc3";
  auto failed = tokenizer->encode_batch(texts, {}, 4);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "text 41: the text is not valid UTF-8 (byte 4)");
  auto none = tokenizer->encode_batch(std::vector<std::string>{}, {}, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(TokenizerTest, LooksUpTokensAndDescribesItself) {
  const std::optional<Tokenizer> bert = load(kBertWithAddedTokens);
  ASSERT_TRUE(bert.has_value());
  EXPECT_EQ(bert->token_to_id("[CLS]"), 2);
  EXPECT_EQ(bert->token_to_id("cat"), 8);
  EXPECT_EQ(bert->token_to_id("Yes"), 39);  // added after the 38-token vocabulary, as tokenizers numbers it
  EXPECT_EQ(bert->token_to_id("nope"), std::nullopt);
  EXPECT_EQ(bert->id_to_token(39), "yes");  // tokenizers 0.23.3 gives a normalized added token's normalized form
  EXPECT_EQ(bert->id_to_token(9), "##s");
  EXPECT_EQ(bert->id_to_token(1000), std::nullopt);
  EXPECT_EQ(bert->vocabulary_size(), 42U);  // tokenizers 0.23.3's get_vocab_size()
  EXPECT_EQ(bert->describe(),
            "normalizer=BertNormalizer pre_tokenizer=BertPreTokenizer model=WordPiece(38) "
            "post_processor=TemplateProcessing added_tokens=9");
  const std::optional<Tokenizer> roberta = load(kRoberta);
  ASSERT_TRUE(roberta.has_value());
  EXPECT_EQ(roberta->vocabulary_size(), 300U);
}

// The BERT document with `from` replaced by `to` (which must be found).
std::string edited(const std::string& from, const std::string& to) {
  std::string document = kBert;
  const std::size_t at = document.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) document.replace(at, from.size(), to);
  return document;
}

void expect_refused(const std::string& document, const std::string& part) {
  auto tokenizer = Tokenizer::from_json(document);
  ASSERT_FALSE(tokenizer.ok()) << part;
  EXPECT_EQ(tokenizer.code(), Code::invalid_argument);
  EXPECT_NE(tokenizer.status().message().find(part), std::string::npos) << tokenizer.status().message();
}

TEST(TokenizerTest, RefusesUnknownComponentTypesInEachStage) {
  expect_refused(edited(R"("normalizer":{"type":"BertNormalizer")", R"("normalizer":{"type":"Shout")"),
                 "normalizer.type is \"Shout\"");
  expect_refused(edited(R"("pre_tokenizer":{"type":"BertPreTokenizer")", R"("pre_tokenizer":{"type":"Chop")"),
                 "pre_tokenizer.type is \"Chop\"");
  expect_refused(edited(R"("model":{"type":"WordPiece")", R"("model":{"type":"WordLevel")"),
                 "model.type is \"WordLevel\"");
  expect_refused(edited(R"("post_processor":{"type":"TemplateProcessing")", R"("post_processor":{"type":"Glue")"),
                 "post_processor.type is \"Glue\"");
}

TEST(TokenizerTest, RefusesMalformedDocuments) {
  expect_refused("{\"model\": ", "tokenizer.json: not valid JSON");
  expect_refused("[1, 2]", "tokenizer.json: the document is [1,2]; expected an object");
  expect_refused(edited(R"("model":{"type":"WordPiece")", R"("mode":{"type":"WordPiece")"), "model is missing");
  expect_refused(edited(R"("version":"1.0")", R"("version":"2.0")"), "version is \"2.0\"");
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":7,"x":[)"), "added_tokens is 7");
  // [MASK] is the model's token 4; a file that says 5 means something tokenizers would not do.
  expect_refused(edited(R"({"id":4,"content":"[MASK]")", R"({"id":5,"content":"[MASK]")"),
                 "added_tokens[4].id is 5; \"[MASK]\" is the model's token 4");
  expect_refused(edited(R"("single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},)",
                        R"("single_word":false,"lstrip":false,"rstrip":false,"special":true},)"),
                 "added_tokens[0].normalized is missing");
  expect_refused(edited(R"("[SEP]":{"id":"[SEP]","ids":[3])", R"("[SEP]":{"id":"[SEP]","ids":[30])"),
                 "the vocabulary gives \"[SEP]\" the id 3");
}

TEST(TokenizerTest, RefusesAnAddedTokenNumberedOtherwiseThanTokenizersWould) {
  const std::string extra = R"({"id":40,"content":"<new>","single_word":false,"lstrip":false,"rstrip":false,)"
                            R"("normalized":false,"special":true},)";
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":[)" + extra),
                 "added_tokens[0].id is 40; tokenizers numbers new added tokens from the end of the model's "
                 "vocabulary: this one is 38");
  const std::string colliding = R"({"id":5,"content":"<new>","single_word":false,"lstrip":false,"rstrip":false,)"
                                R"("normalized":false,"special":true},)";
  expect_refused(edited(R"("added_tokens":[)", R"("added_tokens":[)" + colliding),
                 "added_tokens[0].id is 5; the id is the model's token \"hello\"");
}

TEST(TokenizerTest, RefusesInvalidTextAndATooSmallMaxLength) {
  const std::optional<Tokenizer> tokenizer = load(kBert);
  ASSERT_TRUE(tokenizer.has_value());
  auto bad = tokenizer->encode("ok \xe2\x82");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "the text is not valid UTF-8 (byte 3)");
  auto bad_pair = tokenizer->encode_pair("fine", "\xed\xa0\x80 surrogate");
  ASSERT_FALSE(bad_pair.ok());
  EXPECT_EQ(bad_pair.status().message(), "the second text is not valid UTF-8 (byte 0)");
  auto small = tokenizer->encode("hello", {.max_length = 2});
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.code(), Code::invalid_argument);
  EXPECT_EQ(small.status().message(), "max_length 2 leaves no room for a token beside 2 special tokens");
  EXPECT_FALSE(tokenizer->encode_pair("a", "b", {.max_length = 3}).ok());
  EXPECT_TRUE(tokenizer->encode_pair("a", "b", {.max_length = 4}).ok());
  EXPECT_TRUE(tokenizer->encode("hello", {.add_special_tokens = false, .max_length = 1}).ok());
}

TEST(TokenizerTest, LoadNamesTheFile) {
  const auto missing = std::filesystem::temp_directory_path() / "accel-no-such-dir" / "tokenizer.json";
  auto tokenizer = Tokenizer::load(missing);
  ASSERT_FALSE(tokenizer.ok());
  EXPECT_NE(tokenizer.status().message().find(missing.string()), std::string::npos);
  EXPECT_NE(tokenizer.status().message().find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace accel::text
