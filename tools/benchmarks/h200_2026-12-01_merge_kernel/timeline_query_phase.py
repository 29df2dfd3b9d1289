import struct,glob,statistics as st
W=160
def pct(v,q):
    v=sorted(v); return v[min(len(v)-1,int(q*(len(v)-1)+0.5))]
for f in sorted(glob.glob('/tmp/tl2/*_r1.bin')):
    d=open(f,'rb').read(); n=len(d)//8; w=struct.unpack('<%dQ'%n,d)
    ev=w[512*W]/1000.0
    ctas=[w[c*W:(c+1)*W] for c in range(512) if w[c*W]!=0]
    t0=min(c[0] for c in ctas)
    ghz=st.median([(c[3]-c[1])/(c[4]-c[0]) for c in ctas if c[4]>c[0]])
    us=lambda cyc: cyc/ghz/1000.0
    ends=[(c[4]-t0)/1000 for c in ctas]
    name=f.split('/')[-1].replace('_r1.bin','').split('_BM_PagedAttention')[1]
    print(f"\n{name}: event {ev:.1f} us, {len(ctas)} CTAs, {ghz:.2f} GHz, segs/CTA max {max(c[2] for c in ctas)}; CTA end p10 {pct(ends,.1):.1f} p50 {pct(ends,.5):.1f} max {max(ends):.1f}")
    parts={k:[] for k in ['loadseg','bar1','next_q','wait+bar2','first_tile','loop','fold','write','boundary']}
    for c in ctas:
        ns=min(c[2],12)
        for i in range(ns):
            b=8+8*i; s=c[b:b+8]; top=c[104+4*i+3] if i<13 else 0
            if 0 in s[:6]: continue
            if top: parts['loadseg'].append(us(s[0]-top))
            if s[6] and s[7]:
                parts['bar1'].append(us(s[6]-s[0])); parts['next_q'].append(us(s[7]-s[6])); parts['wait+bar2'].append(us(s[1]-s[7]))
            parts['first_tile'].append(us(s[2]-s[1])); parts['loop'].append(us(s[3]-s[2])); parts['fold'].append(us(s[4]-s[3])); parts['write'].append(us(s[5]-s[4]))
            if i+1<ns and c[b+8+2]: parts['boundary'].append(us(c[b+8+2]-s[3]))
    print("  median (p90) us: "+"; ".join(f"{k} {st.median(v):.2f} ({pct(v,.9):.2f})" for k,v in parts.items() if v))
