(* llama.ml: rig-llama (examples/llama) over the Rig module: the same
   forward pass, the same kernels (the host object and the SPIR-V that the
   C program carries), the same submissions made once and run per token,
   the same greedy tokens; printed as token ids, with "N tok/s" on stderr.

     llama.exe CHECKPOINT --code DIR [--steps N] [--device NAME]

   DIR holds llama-kernels.o (the meson build's examples/llama) for the
   host and NAME.spv for Vulkan (examples/llama/vulkan). One device: the
   host or a device that runs launches. *)

type config = {
  dim : int; hidden : int; layers : int; heads : int; kv_heads : int;
  vocab : int; seq : int; shared : bool;
}

(* The checkpoint's header, read from the io device. *)
let read_config file =
  let b = Rig.Buffer.of_io file 28 and h = Bytes.create 28 in
  Rig.Buffer.blit_to_bytes b 0 h 0 28;
  let g i = Int32.to_int (Bytes.get_int32_le h (4 * i)) in
  { dim = g 0; hidden = g 1; layers = g 2; heads = g 3; kv_heads = g 4;
    vocab = abs (g 5); seq = g 6; shared = g 5 > 0 }

type tensor = Embed | Rms_att | Wq | Wk | Wv | Wo | Rms_ffn | W1 | W2 | W3 | Rms_final | Cls

(* Floats of each tensor over all layers (llama2.c's order), and per layer. *)
let floats c t =
  let kv = c.dim * c.kv_heads / c.heads and l = c.layers in
  match t with
  | Embed | Cls -> c.vocab * c.dim
  | Rms_att | Rms_ffn -> l * c.dim
  | Wq | Wo -> l * c.dim * c.dim
  | Wk | Wv -> l * c.dim * kv
  | W1 | W2 | W3 -> l * c.dim * c.hidden
  | Rms_final -> c.dim

let order = [ Embed; Rms_att; Wq; Wk; Wv; Wo; Rms_ffn; W1; W2; W3; Rms_final; Cls ]
let per_layer = function Rms_att | Wq | Wk | Wv | Wo | Rms_ffn | W1 | W2 | W3 -> true | _ -> false

(* The byte offset and bytes of tensor t of layer l. *)
let rec tensor_at c t l =
  if t = Cls && c.shared then tensor_at c Embed 0
  else
    let rec before acc = function
      | u :: rest when u <> t -> before (acc + (4 * floats c u)) rest
      | _ -> acc
    in
    let at = before 28 order in
    let at = if t = Cls then at + (4 * c.seq * (c.dim / c.heads)) else at in
    let one = 4 * floats c t / if per_layer t then c.layers else 1 in
    ((if per_layer t then at + (one * l) else at), one)

let f32 x = Int32.float_of_bits (Int32.bits_of_float x)

(* The RoPE table as stage.c computes it, in float32 steps. *)
let rope_table c =
  let hs = c.dim / c.heads in
  let b = Bytes.create (4 * c.seq * hs) in
  for pos = 0 to c.seq - 1 do
    for i = 0 to (hs / 2) - 1 do
      let freq = f32 (1.0 /. f32 (Float.pow 10000.0 (f32 (float (2 * i) /. float hs)))) in
      let v = f32 (float pos *. freq) in
      Bytes.set_int32_le b (4 * ((pos * hs) + (2 * i))) (Int32.bits_of_float (cos v));
      Bytes.set_int32_le b (4 * ((pos * hs) + (2 * i) + 1)) (Int32.bits_of_float (sin v))
    done
  done;
  Bytes.to_string b

let names = [| "llama_embed"; "llama_rmsnorm"; "llama_matvec"; "llama_rope"; "llama_attention"; "llama_swiglu" |]
let files = [| "embed"; "rmsnorm"; "matvec"; "rope"; "attention"; "swiglu" |]

let read_file path =
  let ic = open_in_bin path in
  Fun.protect ~finally:(fun () -> close_in ic) (fun () -> really_input_string ic (in_channel_length ic))

(* The kernels on d, by index of names. *)
let load_code d dir =
  let load bytes =
    match Rig.Image.load d bytes with Ok im -> im | Error e -> failwith ("loading the kernels: " ^ e)
  in
  let resolve im n = match Rig.Image.resolve im n with Some f -> f | None -> failwith ("no " ^ n) in
  if Rig.equal d Rig.host then
    let im = load (read_file (Filename.concat dir "llama-kernels.o")) in
    Array.map (resolve im) names
  else Array.mapi (fun i n -> resolve (load (read_file (Filename.concat dir (files.(i) ^ ".spv")))) n) names

(* A launch as each run sets it: its block, grid and integers. *)
type launch = { k : int; groups : int; threads : int; off : int; ints : int array }

(* Builds the model on d: every buffer and the one submission of a
   token's forward pass, its refs fixed; returns the submission, its
   launches, the step and logits buffers. *)
let build c d file code =
  let fn = load_code d code in
  let host = Rig.equal d Rig.host in
  let mem n = Rig.Buffer.create d n in
  let load t l =
    let at, n = tensor_at c t l in
    let b = mem n in
    Rig.Buffer.copy ~src:(Rig.Buffer.of_io ~off:at file n) ~dst:b;
    b
  in
  let dim = c.dim and hid = c.hidden and hs = c.dim / c.heads in
  let kv_dim = c.dim * c.kv_heads / c.heads in
  let step = mem 16 and x = mem (4 * dim) and xb = mem (4 * dim) and q = mem (4 * dim) in
  let att = mem (4 * c.heads * c.seq) and hb = mem (4 * hid) and hb2 = mem (4 * hid) in
  let table = Rig.Buffer.of_string ~device:d (rope_table c) in
  let logits = mem (4 * c.vocab) in
  let parts = ref [] and launches = ref [] in
  (* A launch of kernel f over n threads: rows share out over the pool on
     the host; elementwise kernels are one group there. *)
  let launch f refs params n rows off ints =
    let refs = Array.map (fun (b, w, at) ->
      Rig.Submission.fixed ~access:(if w then Rig.Buffer.Read_write else Rig.Buffer.Read) b ~at) refs in
    let groups, threads = if host then ((if rows then n else 1), if rows then 1 else n) else ((n + 63) / 64, 64) in
    parts := Rig.Submission.launch ~refs fn.(f) ~params :: !parts;
    launches := (groups, threads, off, ints) :: !launches
  in
  let rmsnorm x w o = launch 1 [| (x, false, 0); (w, false, 8); (o, true, 16) |] 32 dim false 24 [| dim |] in
  let matvec w x o n d pos_mul acc =
    launch 2 [| (w, false, 0); (x, false, 8); (o, true, 16); (step, false, 24) |] 64 d true 32
      [| n; d; pos_mul; acc |]
  in
  let emb = load Embed 0 in
  launch 0 [| (emb, false, 0); (x, true, 8); (step, false, 16) |] 32 dim false 24 [| dim |];
  for l = 0 to c.layers - 1 do
    let kc = mem (4 * c.seq * kv_dim) and vc = mem (4 * c.seq * kv_dim) in
    rmsnorm x (load Rms_att l) xb;
    matvec (load Wq l) xb q dim dim 0 0;
    matvec (load Wk l) xb kc dim kv_dim kv_dim 0;
    matvec (load Wv l) xb vc dim kv_dim kv_dim 0;
    launch 3 [| (q, true, 0); (kc, true, 8); (table, false, 16); (step, false, 24) |] 56 (dim / 2) false 32
      [| dim; kv_dim; hs |];
    launch 4 [| (q, false, 0); (kc, false, 8); (vc, false, 16); (att, true, 24); (xb, true, 32); (step, false, 40) |]
      88 c.heads true 48 [| c.heads; c.heads / c.kv_heads; hs; kv_dim; c.seq |];
    matvec (load Wo l) xb x dim dim 0 1;
    rmsnorm x (load Rms_ffn l) xb;
    matvec (load W1 l) xb hb dim hid 0 0;
    matvec (load W3 l) xb hb2 dim hid 0 0;
    launch 5 [| (hb, true, 0); (hb2, false, 8) |] 24 hid false 16 [| hid |];
    matvec (load W2 l) hb x hid dim 0 1
  done;
  rmsnorm x (load Rms_final 0) xb;
  matvec (if c.shared then emb else load Cls 0) xb logits dim c.vocab 0 0;
  let s = Rig.Submission.make d (Array.of_list (List.rev !parts)) in
  let launches = List.rev !launches |> List.mapi (fun i (groups, threads, off, ints) ->
    { k = Rig.Submission.block s i; groups; threads; off; ints }) in
  (s, Array.of_list launches, step, logits)

(* One token: the step put, a run taken, its blocks set, submitted; the
   logits read into out. *)
let forward (s, launches, step, logits) token pos out =
  let st = Bytes.create 16 in
  Bytes.set_int64_le st 0 (Int64.of_int pos);
  Bytes.set_int64_le st 8 (Int64.of_int token);
  Rig.Buffer.blit_from_bytes st 0 step 0 16;
  let r = Rig.Submission.take s in
  Array.iter (fun l ->
    Rig.Submission.Run.groups r l.k l.groups 1 1;
    Rig.Submission.Run.threads r l.k l.threads 1 1;
    Array.iteri (fun i v -> Rig.Submission.Run.int r l.k (l.off + (8 * i)) v) l.ints) launches;
  ignore (Rig.submit r ~buffers:[||]);
  Rig.Buffer.blit_to_bytes logits 0 out 0 (Bytes.length out)

let argmax out n =
  let best = ref 0 in
  for i = 1 to n - 1 do
    if Int32.float_of_bits (Bytes.get_int32_le out (4 * i)) > Int32.float_of_bits (Bytes.get_int32_le out (4 * !best))
    then best := i
  done;
  !best

let () =
  let ckpt = ref "" and code = ref "" and steps = ref 256 and device = ref "CPU" in
  Arg.parse
    [ ("--code", Arg.Set_string code, "DIR the kernels");
      ("--steps", Arg.Set_int steps, "N tokens");
      ("--device", Arg.Set_string device, "NAME the device") ]
    (fun a -> ckpt := a) "llama.exe CHECKPOINT --code DIR [--steps N] [--device NAME]";
  let file = match Rig.open_io (Rig_edge.file ~read_only:true !ckpt) with
    | Ok f -> f | Error e -> prerr_endline ("llama: " ^ e); exit 1 in
  let c = read_config file in
  let d = if !device = "CPU" then Rig.host else
    match Rig.open_ (Rig_edge.plugin !device) with
    | Ok d -> d | Error e -> prerr_endline ("llama: " ^ e); exit 77 in
  let m = build c d file !code in
  let steps = if !steps = 0 || !steps > c.seq then c.seq else !steps in
  let out = Bytes.create (4 * c.vocab) in
  let token = ref 1 and pos = ref 0 and start = ref 0.0 and stop = ref false in
  while !pos < steps && not !stop do
    forward m !token !pos out;
    let next = argmax out c.vocab in
    incr pos;
    if next = 1 then stop := true
    else begin
      Printf.printf "%d %!" next;
      token := next;
      if !start = 0.0 then start := Unix.gettimeofday ()
    end
  done;
  print_newline ();
  if !pos > 1 then Printf.eprintf "%.2f tok/s\n" (float (!pos - 1) /. (Unix.gettimeofday () -. !start))
