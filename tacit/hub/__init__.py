"""The Hugging Face Hub and the files it serves, asked once and briefly: whether the Hub may
be asked or its cache read instead (access), where a model's files and its tokenizer come
from (model_files), and the norms, items and template files named by an hf:// URL
(dataset_files). Nothing here loads a model."""
