"""``crossbow export [--net NET] --checkpoint C --output model.onnx [--input-size N]``: a
checkpoint's average model z (or a Model.save file) as an ONNX inference graph."""


def _export(args):
    from crossbow import net_source, nets, onnx_export, weights
    # ImageNet nets are built for the size; the others keep theirs and the graph's input is
    # resized where their layers allow it (onnx_export checks).
    built = args.input_size if args.net in nets.IMAGENET else None
    path = weights.checkpoint_path(args.checkpoint)
    if weights.is_training_checkpoint(path):
        builder = net_source.checkpoint_builder(args.net, path, args.num_classes, built)
    elif args.net is None:
        raise ValueError(f"'{path}' is a Model.save file, which does not record its net: give "
                         f"--net")
    else:
        builder = net_source.builder(args.net, args.num_classes, built)
    arrays = weights.read(path, builder)
    onnx_export.export(builder, arrays, args.output, None if built else args.input_size)
    c, h, w = builder.input_shape
    if args.input_size:
        h = w = args.input_size
    print(f"wrote {args.output}: {builder.source or builder.name}, input data [N, {c}, {h}, {w}], "
          f"output {builder.output} [N, {builder.num_classes}], ONNX opset {onnx_export.OPSET}")
    return 0


def add_parser(sub, net_help):
    ex = sub.add_parser("export", help="write a checkpoint's average model as ONNX")
    ex.add_argument("--net", metavar="NET",
                    help=net_help + "; default: the net a training checkpoint records")
    ex.add_argument("--checkpoint", required=True,
                    help="a checkpoint file or folder (its average model z), or a Model.save file")
    ex.add_argument("--output", "-o", required=True, help="the .onnx file to write")
    ex.add_argument("--input-size", type=int, default=None,
                    help="image height and width of the graph's input (default: the net's)")
    ex.add_argument("--num-classes", type=int, default=None,
                    help="classes of the last layer (default: the net's dataset)")
    ex.set_defaults(run=_export)
