// ModelFolder::read on folders the tests write for the families beside BERT and for bare checkpoints: each
// architecture read with its defaults, or refused naming the file and the field.
#include <gtest/gtest.h>

#include "model_folder_fixture.hpp"

namespace accel::embed {
namespace {

TEST_F(ModelFolderTest, ABareCheckpointGetsTheDefaultsOfItsArchitecture) {
  const auto bare = [&](const std::string& architecture) {
    std::string config = kMiniLmFiles.at("config.json");
    config.replace(config.find("BertModel"), 9, architecture);
    return read_with({{"modules.json", ""}, {"sentence_bert_config.json", ""}, {"config.json", config}});
  };
  const Result<ModelFolder> encoder = bare("BertModel");
  ASSERT_TRUE(encoder.ok()) << encoder.status().to_string();
  EXPECT_EQ(encoder->head, Head::embedding);
  EXPECT_EQ(encoder->pooling, graph::PoolMode::mean);
  EXPECT_FALSE(encoder->normalize);
  EXPECT_EQ(encoder->max_sequence_length(), 512u);
  const Result<ModelFolder> reranker = bare("BertForSequenceClassification");
  ASSERT_TRUE(reranker.ok()) << reranker.status().to_string();
  EXPECT_EQ(reranker->head, Head::classifier);
  EXPECT_EQ(reranker->output_dimensions(), 2u);  // transformers' default num_labels
  const Result<ModelFolder> splade = bare("BertForMaskedLM");
  ASSERT_TRUE(splade.ok()) << splade.status().to_string();
  EXPECT_EQ(splade->head, Head::splade);
  EXPECT_EQ(splade->output_dimensions(), 30522u);
}

TEST_F(ModelFolderTest, ReadsTheFamiliesBesideBert) {
  const Result<ModelFolder> roberta = read_with(
      {{"config.json", R"({"architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta",
          "hidden_act": "gelu", "hidden_size": 384, "intermediate_size": 1536, "layer_norm_eps": 1e-05,
          "max_position_embeddings": 514, "num_attention_heads": 12, "num_hidden_layers": 6, "pad_token_id": 1,
          "type_vocab_size": 1, "vocab_size": 250002, "id2label": {"0": "LABEL_0"}})"},
       {"modules.json", ""}});
  ASSERT_TRUE(roberta.ok()) << roberta.status().to_string();
  EXPECT_EQ(roberta->family->name, "RoBERTa");
  EXPECT_EQ(roberta->config.position_offset, 2u);
  EXPECT_EQ(roberta->max_sequence_length(), 256u);  // sentence_bert_config.json's, below the 512 positions
  EXPECT_EQ(roberta->output_dimensions(), 1u);
  const Result<ModelFolder> distilbert =
      read_with({{"config.json", R"({"model_type": "distilbert", "activation": "gelu", "dim": 384, "hidden_dim": 1536,
          "max_position_embeddings": 512, "n_heads": 12, "n_layers": 6, "vocab_size": 30522})"}});
  ASSERT_TRUE(distilbert.ok()) << distilbert.status().to_string();
  EXPECT_EQ(distilbert->family->name, "DistilBERT");
  EXPECT_EQ(distilbert->config.type_vocab_size, 0u);
  EXPECT_EQ(distilbert->config.layer_norm_eps, 1e-12);
  expect_refused({{"config.json", R"({"model_type": "distilbert", "activation": "gelu", "dim": 384,
          "hidden_dim": 1536, "max_position_embeddings": 512, "n_heads": 7, "n_layers": 6, "vocab_size": 30522})"}},
                 "config.json", "n_heads", "7 does not divide dim 384");
}

TEST_F(ModelFolderTest, ReadsQwenDecodersAndRefusesWhatTheyDoNotRun) {
  const std::string qwen3 = R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_act": "silu",
      "hidden_size": 384, "head_dim": 128, "intermediate_size": 1536, "max_position_embeddings": 32768,
      "num_attention_heads": 6, "num_key_value_heads": 2, "num_hidden_layers": 2, "rms_norm_eps": 1e-06,
      "rope_theta": 1000000, "rope_scaling": null, "use_sliding_window": false, "vocab_size": 30522})";
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string config = qwen3;
    return config.replace(config.find(from), from.size(), to);
  };
  const Result<ModelFolder> bare =
      read_with({{"config.json", qwen3}, {"modules.json", ""}, {"sentence_bert_config.json", ""}});
  ASSERT_TRUE(bare.ok()) << bare.status().to_string();
  EXPECT_EQ(bare->family->name, "Qwen3");
  EXPECT_TRUE(bare->config.decoder && bare->config.qk_norm && !bare->config.qkv_bias);
  EXPECT_EQ(bare->config.head_size(), 128u);
  EXPECT_EQ(bare->config.num_key_value_heads, 2u);
  EXPECT_EQ(bare->config.rope_theta, 1e6);
  EXPECT_EQ(bare->pooling, graph::PoolMode::last);
  EXPECT_EQ(bare->max_sequence_length(), 32768u);
  EXPECT_TRUE(bare->config.causal);
  const Result<ModelFolder> bidirectional =
      read_with({{"config.json", with("\"rope_scaling\"", "\"is_causal\": false, \"rope_scaling\"")}});
  ASSERT_TRUE(bidirectional.ok()) << bidirectional.status().to_string();
  EXPECT_FALSE(bidirectional->config.causal);
  const Result<ModelFolder> v5 =
      read_with({{"config.json", with(R"("rope_theta": 1000000)",
                                      R"("rope_parameters": {"rope_type": "default", "rope_theta": 5e3})")}});
  ASSERT_TRUE(v5.ok()) << v5.status().to_string();
  EXPECT_EQ(v5->config.rope_theta, 5e3);
  const Result<ModelFolder> qwen2 =
      read_with({{"config.json", with(R"("model_type": "qwen3")", R"("model_type": "qwen2")")}});
  ASSERT_TRUE(qwen2.ok()) << qwen2.status().to_string();
  EXPECT_TRUE(qwen2->config.qkv_bias && !qwen2->config.qk_norm);
  EXPECT_EQ(qwen2->config.head_size(), 64u);  // Qwen2 has no head_dim: hidden_size / heads
  expect_refused({{"config.json", with(R"("rope_scaling": null)", R"("rope_scaling": {"rope_type": "yarn"})")}},
                 "config.json", "rope_scaling", "rope type \"yarn\" is not supported");
  expect_refused({{"config.json", with(R"("num_key_value_heads": 2)", R"("num_key_value_heads": 4)")}}, "config.json",
                 "num_key_value_heads", "4 does not divide num_attention_heads 6");
  expect_refused({{"config.json", with("false", "true")}}, "config.json", "use_sliding_window", "sliding-window");
  expect_refused({{"config.json", with("Qwen3ForCausalLM", "Qwen3ForSequenceClassification")}, {"modules.json", ""}},
                 "config.json", "architectures", "a classifier head is not supported for the Qwen3 family");
}

}  // namespace
}  // namespace accel::embed
