"""tests/zoo/models.py — the model zoo: real architectures from torch,
torchvision and transformers with seeded random weights (nothing is
downloaded), small inputs, and the options they are exported with.

Each entry is a Model: a name, a builder (seed -> torch module in eval
mode), an input builder (seed -> {input name: numpy array}), the output
names, dynamic axes where natural, the opset, and optionally a looser
tolerance WITH its reason.  export.py hashes an entry (its fields and the
source of its builders) into the cache key, so editing an entry re-exports
only that model.

Random weights must keep activations O(1), or a comparison against them
means nothing (a head initialised to zero makes every output 0 and any
ncc output "match").  randomize() below therefore
  - re-initialises every parameter that is constant after the library's own
    init (torchvision's zero-initialised heads and residual BNs, ConvNeXt's
    1e-6 layer scale, ones/zeros of norms, zero biases),
  - gives every BatchNorm real statistics: its weight/bias are random, its
    running mean/var are measured on a batch of this model's own inputs
    (in order, each BN on what the BNs before it produce), floored and
    perturbed,
  - leaves transformers' N(0, initializer_range) init in place, with a
    larger initializer_range than the default 0.02 so attention is not
    uniform.
export.py then checks that each model's outputs are not degenerate.
"""
import inspect
import math

import numpy as np
import torch
import torch.nn as nn

OPSET = 17  # LayerNormalization is native from 17; ncc reads 13..28


class Model:
    def __init__(self, name, family, build, inputs, outputs, dynamic=None,
                 opset=OPSET, tol=1e-4, tol_reason=None, calib_batch=True,
                 exact_outputs=(), note="", spec=""):
        self.name, self.family = name, family
        self.build, self.inputs, self.outputs = build, inputs, outputs
        self.dynamic = dynamic or {}
        self.opset, self.tol, self.tol_reason = opset, tol, tol_reason
        self.calib_batch = calib_batch
        self.exact_outputs = tuple(exact_outputs)  # int outputs / indices
        self.note = note
        self.spec = spec  # what a shared builder is parameterised by
        assert tol == 1e-4 or tol_reason, "%s: a looser bound needs a reason" % name

    def key_text(self):
        """What the cache key hashes: every field and the builders' source."""
        parts = [self.name, self.family, self.spec, repr(self.outputs), repr(sorted(self.dynamic.items())),
                 str(self.opset), repr(self.exact_outputs)]
        for f in (self.build, self.inputs, _vision, _image, _tokens, _hf, HF):
            try:
                parts.append(inspect.getsource(f))
            except (OSError, TypeError):
                parts.append(repr(f))
        parts.append(inspect.getsource(randomize))
        return "\n".join(parts)


# ---------------------------------------------------------------- weights

def _is_bn(m):
    return isinstance(m, nn.modules.batchnorm._BatchNorm) or "BatchNorm" in type(m).__name__


@torch.no_grad()
def randomize(model, seed, calib_inputs=None, fan_in_convs=False):
    """Make a freshly built model's weights non-degenerate (see the header).
    fan_in_convs: draw every conv weight from N(0, 2/fan_in) first.
    torchvision's fan_out init makes the squeeze-excitation 1x1 convs of
    EfficientNet/MobileNetV3/RegNet saturate their sigmoid with inputs in
    the hundreds, where float32 torch itself is 1e-4..5e-3 off float64."""
    g = torch.Generator().manual_seed(seed + 1000)
    if fan_in_convs:
        for mod in model.modules():
            if isinstance(mod, nn.Conv2d):
                fan_in = mod.weight[0].numel()
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) * math.sqrt(2.0 / fan_in))
    for name, p in model.named_parameters():
        if p.numel() == 0:
            continue
        flat = p.detach().flatten()
        if p.numel() > 1 and not bool((flat == flat[0]).all()):
            continue  # already random
        if p.dim() >= 2:
            fan_in = max(1, p[0].numel())
            p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(fan_in))
        elif float(flat[0]) == 0.0:
            p.copy_(torch.randn(p.shape, generator=g) * 0.1)   # biases
        else:
            p.copy_(torch.rand(p.shape, generator=g) + 0.5)    # scales: U(0.5, 1.5)
    bns = [m for m in model.modules() if _is_bn(m)]
    calibrated = set()
    if bns and calib_inputs is not None:
        # Sequential calibration in eval mode: a pre-hook sets each BN's
        # running stats from the input it actually gets, so every BN
        # downstream is calibrated on what the (perturbed) BNs upstream
        # really produce.  Calibrating in train mode instead (batch stats)
        # and perturbing afterwards compounds through the net: x1e3..1e4
        # activations in EfficientNet/MobileNetV3.
        def hook(mod, inp):
            x = inp[0]
            dims = [0] + list(range(2, x.dim()))
            mean, var = x.mean(dims), x.var(dims, unbiased=False)
            c = var.shape[0]
            # floor: a channel dead on this batch (var ~ 0) would scale
            # rounding by 1/sqrt(eps), and a narrow signal on a large
            # offset cancels digits in x - mean: keep std >= |mean| / 2
            var = torch.maximum(var, 0.5 * var.mean() + 1e-3)
            var = torch.maximum(var, mean.square() / 4)
            var = var * (torch.rand(c, generator=g) * 0.5 + 0.75)   # "random" statistics
            mean = mean + torch.randn(c, generator=g) * 0.1 * var.sqrt()
            mod.running_mean.copy_(mean)
            mod.running_var.copy_(var)
            calibrated.add(mod)
        hooks = [m.register_forward_pre_hook(hook) for m in bns
                 if getattr(m, "running_var", None) is not None]
        model.eval()
        calib_inputs()
        for h in hooks:
            h.remove()
    for m in bns:
        if m in calibrated:
            continue
        if getattr(m, "running_var", None) is not None:
            c = m.running_var.shape[0]
            m.running_var.mul_(torch.rand(c, generator=g) + 0.5)
            m.running_mean.add_(torch.randn(c, generator=g) * 0.1)
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            continue  # weight/bias: random parameters, drawn above
        w = getattr(m, "weight", None)   # frozen BNs (buffers, e.g. DETR's)
        if w is not None:
            w.copy_(torch.rand(w.shape, generator=g) + 0.5)
        b = getattr(m, "bias", None)
        if b is not None:
            b.copy_(torch.randn(b.shape, generator=g) * 0.1)
    model.eval()
    return model


def _image(shape):
    def make(seed):
        return {"x": np.random.RandomState(seed).standard_normal(shape).astype(np.float32)}
    return make


def _calib_batch(make, seed, n=8):
    """The BN calibration batch: this model's inputs for seeds seed..seed+n-1
    (they include the inputs the zoo runs, seeds 1 and 2).  Two images were
    not enough: a channel nearly constant on them has a tiny variance that
    other inputs blow up by 1e3 (EfficientNet)."""
    return torch.from_numpy(np.concatenate([make(s)["x"] for s in range(seed, seed + n)]))


def _vision(name, ctor, hw=64, **kw):
    """A torchvision classifier built by its constructor, input 1x3xHWxHW."""
    def build(seed):
        torch.manual_seed(seed)
        m = ctor(**kw).eval()
        x = _calib_batch(_image((1, 3, hw, hw)), seed)
        return randomize(m, seed, lambda: m(x), fan_in_convs=True)
    build.__name__ = "build_" + name
    return build


def _tv(name, arch, hw=64, **kw):
    import torchvision.models as tvm
    return Model(name, "torchvision", _vision(name, getattr(tvm, arch), hw, **kw),
                 _image((1, 3, hw, hw)), ["y"], {"x": {0: "N"}, "y": {0: "N"}},
                 spec=repr((arch, hw, sorted(kw.items()))))


# ---------------------------------------------------------------- custom nets

class TinyUNet(nn.Module):
    """A diffusion-style UNet: sinusoidal timestep embedding + MLP, residual
    blocks GroupNorm-SiLU-Conv with the time embedding added, strided-conv
    downsampling, ConvTranspose upsampling, skip concatenation, and a
    single-head self-attention block at the lowest resolution (as in DDPM)."""

    class Res(nn.Module):
        def __init__(self, cin, cout, tdim):
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.t = nn.Linear(tdim, cout)
            self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, temb):
            h = self.c1(nn.functional.silu(self.n1(x)))
            h = h + self.t(temb)[:, :, None, None]
            h = self.c2(nn.functional.silu(self.n2(h)))
            return self.skip(x) + h

    class Attn(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.n, self.qkv, self.o = nn.GroupNorm(8, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            q, k, v = self.qkv(self.n(x)).reshape(b, 3, c, h * w).unbind(1)
            a = torch.softmax(q.transpose(1, 2) @ k / math.sqrt(c), dim=-1)
            return x + self.o((v @ a.transpose(1, 2)).reshape(b, c, h, w))

    def __init__(self, ch=32, tdim=64):
        super().__init__()
        self.ch = ch
        self.temb = nn.Sequential(nn.Linear(ch, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch, 3, padding=1)
        self.d1, self.down1 = self.Res(ch, ch, tdim), nn.Conv2d(ch, ch, 3, 2, 1)
        self.d2, self.down2 = self.Res(ch, 2 * ch, tdim), nn.Conv2d(2 * ch, 2 * ch, 3, 2, 1)
        self.mid, self.attn = self.Res(2 * ch, 2 * ch, tdim), self.Attn(2 * ch)
        self.up2, self.u2 = nn.ConvTranspose2d(2 * ch, 2 * ch, 4, 2, 1), self.Res(4 * ch, ch, tdim)
        self.up1, self.u1 = nn.ConvTranspose2d(ch, ch, 4, 2, 1), self.Res(2 * ch, ch, tdim)
        self.out = nn.Sequential(nn.GroupNorm(8, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

    def forward(self, x, t):
        half = self.ch // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
        e = t[:, None] * freqs[None, :]
        temb = self.temb(torch.cat([torch.sin(e), torch.cos(e)], dim=1))
        h0 = self.inp(x)
        h1 = self.d1(h0, temb)
        h2 = self.d2(self.down1(h1), temb)
        m = self.attn(self.mid(self.down2(h2), temb))
        u = self.u2(torch.cat([self.up2(m), h2], 1), temb)
        u = self.u1(torch.cat([self.up1(u), h1], 1), temb)
        return self.out(u)


def build_unet(seed):
    torch.manual_seed(seed)
    return randomize(TinyUNet().eval(), seed)


def inputs_unet(seed):
    r = np.random.RandomState(seed)
    return {"x": r.standard_normal((1, 3, 32, 32)).astype(np.float32),
            "t": np.array([r.randint(1, 1000)], dtype=np.float32)}


class RNNTagger(nn.Module):
    """Embedding-free sequence model: 2-layer LSTM (or bidirectional GRU)
    over a [batch, seq, feat] input, then a Linear per step."""

    def __init__(self, cell):
        super().__init__()
        if cell == "lstm":
            self.rnn = nn.LSTM(16, 32, num_layers=2, batch_first=True)
            out = 32
        else:
            self.rnn = nn.GRU(16, 32, num_layers=1, batch_first=True, bidirectional=True)
            out = 64
        self.fc = nn.Linear(out, 8)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


def build_lstm(seed):
    torch.manual_seed(seed)
    return randomize(RNNTagger("lstm").eval(), seed)


def build_gru(seed):
    torch.manual_seed(seed)
    return randomize(RNNTagger("gru").eval(), seed)


def inputs_seq(seed):
    return {"x": np.random.RandomState(seed).standard_normal((2, 10, 16)).astype(np.float32)}


# ---------------------------------------------------------------- torchvision, configured

def build_convnext(seed):
    """torchvision ConvNeXt (tiny's block, layer scale, stochastic depth
    rows) with smaller widths/depths than convnext_tiny."""
    from torchvision.models.convnext import ConvNeXt, CNBlockConfig
    cfg = [CNBlockConfig(32, 64, 2), CNBlockConfig(64, 128, 2), CNBlockConfig(128, 256, 2),
           CNBlockConfig(256, None, 2)]
    torch.manual_seed(seed)
    m = ConvNeXt(cfg, stochastic_depth_prob=0.1, num_classes=100).eval()
    return randomize(m, seed)


def build_vit(seed):
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(seed)
    m = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,
                          hidden_dim=64, mlp_dim=128, num_classes=10).eval()
    return randomize(m, seed)


def build_swin(seed):
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(seed)
    m = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2, 2], num_heads=[2, 4, 8],
                        window_size=[4, 4], stochastic_depth_prob=0.1, num_classes=10).eval()
    return randomize(m, seed)


def _det_wrap(det):
    class Det(nn.Module):
        def __init__(self):
            super().__init__()
            self.det = det

        def forward(self, x):
            r = self.det([x[0]])[0]
            return r["boxes"], r["scores"], r["labels"]
    return Det()


def build_ssdlite(seed):
    """torchvision SSDlite320 (MobileNetV3-Large backbone): anchors, box
    decoding, score threshold, per-class batched NMS (NonMaxSuppression),
    TopK, and its own resize/normalise transform."""
    from torchvision.models.detection import ssdlite320_mobilenet_v3_large
    torch.manual_seed(seed)
    m = ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5,
                                      score_thresh=0.2, detections_per_img=20,
                                      topk_candidates=50).eval()
    imgs = list(_calib_batch(inputs_det, seed))
    randomize(m, seed, lambda: m(imgs), fan_in_convs=True)
    return _det_wrap(m)


def inputs_det(seed):
    return {"x": np.random.RandomState(seed).rand(1, 3, 320, 320).astype(np.float32)}


def _seg(ctor, **kw):
    class Seg(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    def build(seed):
        torch.manual_seed(seed)
        m = ctor(weights=None, weights_backbone=None, **kw).eval()
        x = _calib_batch(_image((1, 3, 64, 64)), seed)
        return Seg(randomize(m, seed, lambda: m(x), fan_in_convs=True))
    return build


def build_deeplabv3(seed):
    from torchvision.models.segmentation import deeplabv3_mobilenet_v3_large
    return _seg(deeplabv3_mobilenet_v3_large, num_classes=6, aux_loss=False)(seed)


def build_fcn(seed):
    from torchvision.models.segmentation import fcn_resnet50
    return _seg(fcn_resnet50, num_classes=6, aux_loss=False)(seed)


# ---------------------------------------------------------------- transformers

class HF(nn.Module):
    """Calls a transformers model with keyword inputs and returns a tuple of
    the selected output fields (the ONNX exporter wants tensors)."""

    def __init__(self, m, in_names, out_fields):
        super().__init__()
        self.m, self.in_names, self.out_fields = m, in_names, out_fields

    def forward(self, *args):
        out = self.m(**dict(zip(self.in_names, args)), return_dict=True)
        return tuple(out[f] for f in self.out_fields)


def _hf(model_cls, config, in_names, out_fields, seed):
    torch.manual_seed(seed)
    config._attn_implementation = "eager"  # the attention code path as written
    m = model_cls(config).eval()
    m.config.use_cache = False
    return HF(randomize(m, seed), in_names, out_fields).eval()


def _tokens(vocab, batch=2, seq=12, mask=True, type_ids=False, first=None):
    def make(seed):
        r = np.random.RandomState(seed)
        ids = r.randint(3, vocab, size=(batch, seq)).astype(np.int64)
        if first is not None:
            ids[:, 0] = first
        d = {"input_ids": ids}
        if mask:
            m = np.ones((batch, seq), np.int64)
            m[-1, seq - 4:] = 0  # the last row is padded: masks matter
            d["attention_mask"] = m
        if type_ids:
            t = np.zeros((batch, seq), np.int64)
            t[:, seq // 2:] = 1
            d["token_type_ids"] = t
        return d
    return make


TEXT_DYN = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
            "token_type_ids": {0: "batch", 1: "seq"}}
SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
             vocab_size=500, max_position_embeddings=64, initializer_range=0.1)


def build_bert(seed):
    from transformers import BertConfig, BertModel
    return _hf(BertModel, BertConfig(**SMALL), ["input_ids", "attention_mask", "token_type_ids"],
               ["last_hidden_state", "pooler_output"], seed)


def build_distilbert(seed):
    from transformers import DistilBertConfig, DistilBertModel
    c = DistilBertConfig(vocab_size=500, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                         max_position_embeddings=64, initializer_range=0.1)
    return _hf(DistilBertModel, c, ["input_ids", "attention_mask"], ["last_hidden_state"], seed)


def build_roberta(seed):
    from transformers import RobertaConfig, RobertaModel
    c = RobertaConfig(**dict(SMALL, max_position_embeddings=66), pad_token_id=1)
    return _hf(RobertaModel, c, ["input_ids", "attention_mask"],
               ["last_hidden_state", "pooler_output"], seed)


def build_gpt2(seed):
    from transformers import GPT2Config, GPT2LMHeadModel
    c = GPT2Config(vocab_size=500, n_positions=64, n_embd=64, n_layer=2, n_head=4, bos_token_id=1, eos_token_id=2,
                   initializer_range=0.1)
    return _hf(GPT2LMHeadModel, c, ["input_ids", "attention_mask"], ["logits"], seed)


T5_CFG = dict(vocab_size=500, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
              num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=32,
              initializer_factor=1.0, decoder_start_token_id=0, pad_token_id=0)


def build_t5_encoder(seed):
    from transformers import T5Config, T5EncoderModel
    return _hf(T5EncoderModel, T5Config(**T5_CFG), ["input_ids", "attention_mask"],
               ["last_hidden_state"], seed)


class T5Decoder(nn.Module):
    """The T5 decoder as generation exports it: decoder tokens, the
    encoder's hidden states and mask -> LM logits (causal self-attention,
    relative position bias, cross-attention, tied-embedding rescale)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, encoder_hidden_states, encoder_attention_mask):
        out = self.m(decoder_input_ids=input_ids,
                     encoder_outputs=(encoder_hidden_states,),
                     attention_mask=encoder_attention_mask, return_dict=True)
        return out.logits


def build_t5_decoder(seed):
    from transformers import T5Config, T5ForConditionalGeneration
    torch.manual_seed(seed)
    c = T5Config(**T5_CFG)
    c._attn_implementation = "eager"
    m = T5ForConditionalGeneration(c).eval()
    m.config.use_cache = False
    return T5Decoder(randomize(m, seed)).eval()


def inputs_t5_decoder(seed):
    r = np.random.RandomState(seed)
    mask = np.ones((2, 10), np.int64)
    mask[1, 7:] = 0
    return {"input_ids": r.randint(1, 500, size=(2, 6)).astype(np.int64),
            "encoder_hidden_states": r.standard_normal((2, 10, 64)).astype(np.float32),
            "encoder_attention_mask": mask}


def build_whisper_encoder(seed):
    from transformers import WhisperConfig, WhisperModel
    c = WhisperConfig(vocab_size=500, num_mel_bins=16, d_model=64, encoder_layers=2,
                      encoder_attention_heads=4, decoder_layers=1, decoder_attention_heads=4,
                      encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=32,
                      max_target_positions=32, init_std=0.1, pad_token_id=0, bos_token_id=1,
                      eos_token_id=2, decoder_start_token_id=1)
    torch.manual_seed(seed)
    c._attn_implementation = "eager"
    m = WhisperModel(c).eval()
    return HF(randomize(m.encoder, seed), ["input_features"], ["last_hidden_state"]).eval()


def inputs_whisper(seed):
    return {"input_features": np.random.RandomState(seed).standard_normal((1, 16, 64)).astype(np.float32)}


def build_clip_text(seed):
    from transformers import CLIPTextConfig, CLIPTextModel
    c = CLIPTextConfig(vocab_size=500, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, max_position_embeddings=32, eos_token_id=2,
                       initializer_factor=5.0)
    return _hf(CLIPTextModel, c, ["input_ids", "attention_mask"],
               ["last_hidden_state", "pooler_output"], seed)


def inputs_clip_text(seed):
    d = _tokens(500)(seed)
    d["input_ids"][0, 9] = 2   # EOS: pooler_output takes the EOS token's state
    d["input_ids"][1, 7] = 2
    return d


def build_clip_vision(seed):
    from transformers import CLIPVisionConfig, CLIPVisionModel
    c = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, image_size=32, patch_size=8, initializer_factor=5.0)
    return _hf(CLIPVisionModel, c, ["pixel_values"], ["last_hidden_state", "pooler_output"], seed)


def build_deit(seed):
    from transformers import DeiTConfig, DeiTForImageClassificationWithTeacher
    c = DeiTConfig(**dict(SMALL, vocab_size=None), image_size=32, patch_size=8, num_labels=10)
    return _hf(DeiTForImageClassificationWithTeacher, c, ["pixel_values"], ["logits"], seed)


def build_beit(seed):
    from transformers import BeitConfig, BeitForImageClassification
    c = BeitConfig(**dict(SMALL, vocab_size=100), image_size=32, patch_size=8, num_labels=10,
                   use_relative_position_bias=True, use_mean_pooling=True, layer_scale_init_value=0.1)
    return _hf(BeitForImageClassification, c, ["pixel_values"], ["logits"], seed)


def build_detr(seed):
    """DETR: a transformers ResNet backbone (BatchNorm frozen into buffers),
    sine position embedding, encoder-decoder transformer with object
    queries, class and box heads."""
    from transformers import DetrConfig, DetrForObjectDetection, ResNetConfig
    bb = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                      layer_type="basic", out_features=["stage4"])
    c = DetrConfig(use_timm_backbone=False, backbone_config=bb, use_pretrained_backbone=False,
                   d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                   decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128,
                   num_queries=10, num_labels=5, init_std=0.1)
    return _hf(DetrForObjectDetection, c, ["pixel_values"], ["logits", "pred_boxes"], seed)


def _pixels(hw):
    def make(seed):
        return {"pixel_values": np.random.RandomState(seed).standard_normal((1, 3, hw, hw)).astype(np.float32)}
    return make


PIX_DYN = {"pixel_values": {0: "batch"}}

# ---------------------------------------------------------------- the zoo

MODELS = [
    # torchvision classifiers (architectures as defined, small input)
    _tv("resnet18", "resnet18"),
    _tv("resnet50", "resnet50"),
    _tv("mobilenet_v2", "mobilenet_v2"),
    _tv("mobilenet_v3_small", "mobilenet_v3_small"),
    _tv("mobilenet_v3_large", "mobilenet_v3_large"),
    _tv("efficientnet_b0", "efficientnet_b0"),
    _tv("regnet_y_400mf", "regnet_y_400mf"),
    _tv("densenet121", "densenet121"),
    _tv("googlenet", "googlenet", aux_logits=False, init_weights=True),
    _tv("inception_v3", "inception_v3", hw=107, aux_logits=False, init_weights=True),
    _tv("shufflenet_v2_x0_5", "shufflenet_v2_x0_5"),
    _tv("squeezenet1_1", "squeezenet1_1"),
    _tv("mnasnet0_5", "mnasnet0_5"),
    # torchvision, smaller configurations of the same code
    Model("convnext", "torchvision", build_convnext, _image((1, 3, 64, 64)), ["y"],
          {"x": {0: "N"}, "y": {0: "N"}}),
    Model("vit", "torchvision", build_vit, _image((1, 3, 32, 32)), ["y"],
          {"x": {0: "N"}, "y": {0: "N"}}),
    Model("swin", "torchvision", build_swin, _image((1, 3, 64, 64)), ["y"],
          {"x": {0: "N"}, "y": {0: "N"}}),
    Model("deeplabv3_mobilenet", "torchvision", build_deeplabv3, _image((1, 3, 64, 64)), ["y"],
          {"x": {0: "N"}, "y": {0: "N"}}),
    Model("fcn_resnet50", "torchvision", build_fcn, _image((1, 3, 32, 32)), ["y"],
          {"x": {0: "N"}, "y": {0: "N"}}),
    Model("ssdlite320", "torchvision", build_ssdlite, inputs_det, ["boxes", "scores", "labels"],
          exact_outputs=["labels"],
          note="NMS; output count is data dependent"),
    # custom torch
    Model("unet_diffusion", "torch", build_unet, inputs_unet, ["y"]),
    Model("lstm", "torch", build_lstm, inputs_seq, ["y"], {"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}}),
    Model("gru_bidir", "torch", build_gru, inputs_seq, ["y"], {"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}}),
    # transformers (small random configs, the real code paths)
    Model("bert", "transformers", build_bert, _tokens(500, type_ids=True),
          ["last_hidden_state", "pooler_output"], TEXT_DYN),
    Model("distilbert", "transformers", build_distilbert, _tokens(500), ["last_hidden_state"], TEXT_DYN),
    Model("roberta", "transformers", build_roberta, _tokens(500), ["last_hidden_state", "pooler_output"],
          TEXT_DYN),
    Model("gpt2", "transformers", build_gpt2, _tokens(500), ["logits"], TEXT_DYN),
    Model("t5_encoder", "transformers", build_t5_encoder, _tokens(500), ["last_hidden_state"], TEXT_DYN),
    Model("t5_decoder", "transformers", build_t5_decoder, inputs_t5_decoder, ["logits"]),
    Model("whisper_encoder", "transformers", build_whisper_encoder, inputs_whisper, ["last_hidden_state"]),
    Model("clip_text", "transformers", build_clip_text, inputs_clip_text,
          ["last_hidden_state", "pooler_output"], TEXT_DYN),
    Model("clip_vision", "transformers", build_clip_vision, _pixels(32),
          ["last_hidden_state", "pooler_output"], PIX_DYN),
    Model("deit", "transformers", build_deit, _pixels(32), ["logits"], PIX_DYN),
    Model("beit", "transformers", build_beit, _pixels(32), ["logits"], PIX_DYN),
    Model("detr", "transformers", build_detr, _pixels(64), ["logits", "pred_boxes"]),
]

BY_NAME = {m.name: m for m in MODELS}
assert len(BY_NAME) == len(MODELS), "duplicate model names"
